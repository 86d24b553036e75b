package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestRetention covers queries/retention.sql: one retention pass, each rule driven by the pass's Now.
func TestRetention(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()

	run := func(t *testing.T, p store.RetentionParams) store.RetentionResult {
		t.Helper()
		if p.BatchSize == 0 {
			p.BatchSize = 1 // several statements per rule, so the rounds are exercised
		}
		if p.PartitionCleanupDays == 0 {
			p.PartitionCleanupDays = 7
		}
		if p.MetricsRetentionDays == 0 {
			p.MetricsRetentionDays = 30
		}
		res, err := st.Jobs().RunRetention(ctx, p)
		require.NoError(t, err)
		require.True(t, res.Ran)
		return res
	}
	left := func(t *testing.T, p uuid.UUID) []string {
		t.Helper()
		rows, err := store.PoolOf(st).Query(ctx, `SELECT transaction_id FROM messages WHERE partition_id = $1 ORDER BY seq`, p)
		require.NoError(t, err)
		out := []string{}
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		return out
	}
	history := func(t *testing.T, queue, kind string) int64 {
		return scalar[int64](t, st, `SELECT coalesce(sum(deleted), 0)::bigint FROM retention_history WHERE queue_name = $1 AND kind = $2`, queue, kind)
	}

	t.Run("RetentionDeleteExpired", func(t *testing.T) {
		name, off := uniq("expire"), uniq("expire-off")
		p := configure(t, st, name, store.QueueOptions{RetentionEnabled: true, RetentionSeconds: 3600})
		po := configure(t, st, off, store.QueueOptions{RetentionSeconds: 3600})
		push(t, st, p, "1", "2", "3")
		push(t, st, po, "1")
		backdate(t, st, p, 2*time.Hour)
		push(t, st, p, "4")
		deadLetter(t, st, p, store.QueueMode, "2", "x")
		// Whatever their state: nobody consumed them.
		res := run(t, store.RetentionParams{Now: time.Now()})
		require.Equal(t, int64(3), res.Expired[name])
		require.Equal(t, []string{"4"}, left(t, p))
		require.Equal(t, []string{"1"}, left(t, po), "retention not enabled")
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM dead_letters WHERE partition_id = $1`, p), "their dead letters go with them")
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT message_count FROM partitions WHERE id = $1`, p))
		require.Equal(t, int64(3), history(t, name, "retention"))
		// Later, the last one too.
		res = run(t, store.RetentionParams{Now: time.Now().Add(2 * time.Hour)})
		require.Equal(t, int64(1), res.Expired[name])
		require.Empty(t, left(t, p))
	})

	t.Run("PrefixOnly", func(t *testing.T) {
		// Only messages before the first kept one go, however the batches fall: here 1 and 2, not 4.
		name := uniq("prefix")
		p := configure(t, st, name, store.QueueOptions{RetentionEnabled: true, RetentionSeconds: 3600})
		push(t, st, p, "1", "2", "3", "4")
		exec(t, st, `UPDATE messages SET created_at = created_at - interval '2 hours' WHERE partition_id = $1 AND transaction_id <> '3'`, p)
		res := run(t, store.RetentionParams{Now: time.Now()})
		require.Equal(t, int64(2), res.Expired[name])
		require.Equal(t, []string{"3", "4"}, left(t, p))
	})

	t.Run("Deadline", func(t *testing.T) {
		// Past its deadline a pass makes one statement per step; the next pass goes on from there.
		name := uniq("deadline")
		p := configure(t, st, name, store.QueueOptions{RetentionEnabled: true, RetentionSeconds: 3600})
		push(t, st, p, "1", "2", "3")
		backdate(t, st, p, 2*time.Hour)
		res := run(t, store.RetentionParams{Now: time.Now(), Deadline: time.Now().Add(-time.Second)})
		require.Equal(t, int64(1), res.Expired[name])
		res = run(t, store.RetentionParams{Now: time.Now()})
		require.Equal(t, int64(2), res.Expired[name])
		require.Empty(t, left(t, p))
	})

	t.Run("RetentionDeleteCompleted", func(t *testing.T) {
		name := uniq("completed")
		p := configure(t, st, name, store.QueueOptions{RetentionEnabled: true, CompletedRetentionSeconds: 3600})
		p2 := partition(t, st, name, "other")
		push(t, st, p, "1", "2", "3")
		push(t, st, p2, "x")
		subscribe(t, st, name, "slow")
		ackDone(t, st, p, store.QueueMode, "1", "2", "3")
		ackDone(t, st, p, "slow", "1")
		// The slowest group of the queue bounds it; on other, "slow" has no cursor: nothing goes there.
		ackDone(t, st, p2, store.QueueMode, "x")
		res := run(t, store.RetentionParams{Now: time.Now()})
		require.Zero(t, res.Completed[name], "not old enough yet")
		res = run(t, store.RetentionParams{Now: time.Now().Add(2 * time.Hour)})
		require.Equal(t, int64(1), res.Completed[name])
		require.Equal(t, []string{"2", "3"}, left(t, p))
		require.Equal(t, []string{"x"}, left(t, p2))
		require.Equal(t, int64(1), history(t, name, "completed_retention"))
	})

	t.Run("RetentionDeleteCompletedWaitsForSubscribedGroups", func(t *testing.T) {
		// A group subscribed to the queue that has not read this partition (nor any other yet) has
		// consumed none of it: what the other groups consumed stays for it, as the stats count it.
		name := uniq("completed-subscribed")
		p := configure(t, st, name, store.QueueOptions{RetentionEnabled: true, CompletedRetentionSeconds: 3600})
		push(t, st, p, "1", "2")
		subscribe(t, st, name, "first")
		ackDone(t, st, p, "first", "1", "2")
		late := uniq("late")
		subscribe(t, st, name, late)
		res := run(t, store.RetentionParams{Now: time.Now().Add(2 * time.Hour)})
		require.Zero(t, res.Completed[name], "late has read nothing")
		require.Equal(t, []string{"1", "2"}, left(t, p))
		ackDone(t, st, p, late, "1")
		res = run(t, store.RetentionParams{Now: time.Now().Add(2 * time.Hour)})
		require.Equal(t, int64(1), res.Completed[name])
		require.Equal(t, []string{"2"}, left(t, p))
	})

	t.Run("RetentionCleanupPartitions", func(t *testing.T) {
		name := uniq("cleanup")
		configure(t, st, name, store.QueueOptions{})
		empty, full, busy := partition(t, st, name, "empty"), partition(t, st, name, "full"), partition(t, st, name, "busy")
		push(t, st, full, "1")
		push(t, st, busy, "1")
		ackDone(t, st, busy, store.QueueMode, "1")
		exec(t, st, `DELETE FROM messages WHERE partition_id = $1`, busy) // consumed and gone, but used recently
		exec(t, st, `UPDATE partitions SET created_at = created_at - interval '8 days' WHERE queue_id = (SELECT id FROM queues WHERE name = $1)`, name)
		res := run(t, store.RetentionParams{Now: time.Now(), PartitionCleanupDays: 7})
		require.Equal(t, int64(1), res.Partitions[name])
		names := func() []string {
			rows, err := store.PoolOf(st).Query(ctx, `SELECT p.name FROM partitions p JOIN queues q ON q.id = p.queue_id WHERE q.name = $1 ORDER BY 1`, name)
			require.NoError(t, err)
			var out []string
			for rows.Next() {
				var s string
				require.NoError(t, rows.Scan(&s))
				out = append(out, s)
			}
			return out
		}
		require.Equal(t, []string{"Default", "busy", "full"}, names(), "empty is gone; Default always stays")
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM partitions WHERE id = $1`, empty))
		res = run(t, store.RetentionParams{Now: time.Now().Add(8 * 24 * time.Hour), PartitionCleanupDays: 7})
		require.Equal(t, int64(1), res.Partitions[name])
		require.Equal(t, []string{"Default", "full"}, names())
		require.Equal(t, int64(2), history(t, name, "partition_cleanup"))
	})

	t.Run("RetentionTrimHistory", func(t *testing.T) {
		q := uniq("trim")
		now := time.Now()
		require.NoError(t, st.Jobs().AddQueueOps(ctx, now.Add(-40*24*time.Hour), "b", []store.QueueOps{{Queue: q, PushRequests: 1}}))
		require.NoError(t, st.Jobs().AddQueueOps(ctx, now.Add(-20*24*time.Hour), "b", []store.QueueOps{{Queue: q, PushRequests: 1}}))
		exec(t, st, `INSERT INTO retention_history (queue_name, kind, deleted, executed_at) VALUES ($1, 'retention', 1, $2), ($1, 'retention', 1, $3)`,
			q, now.Add(-40*24*time.Hour), now.Add(-time.Hour))
		res := run(t, store.RetentionParams{Now: now, MetricsRetentionDays: 30})
		require.Equal(t, int64(2), res.HistoryRowsTrimmed, "the 40-day-old counters and history row")
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT count(*) FROM queue_ops_history WHERE queue_name = $1`, q))
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT count(*) FROM retention_history WHERE queue_name = $1`, q))
	})
}

// subscribe records group's subscription to queue, as its first pop does.
func subscribe(t *testing.T, st *store.Store, queue, group string) {
	t.Helper()
	ok, err := st.Groups().EnsureSubscription(t.Context(), queue, group, store.SubscribeAll, time.Time{})
	require.NoError(t, err)
	require.True(t, ok)
}
