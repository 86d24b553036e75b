package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestStats covers queries/stats.sql: the rolled-up queue counts and the per-broker operation counters.
func TestStats(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	t.Run("StatsApply", func(t *testing.T) {
		t.Parallel()
		st := schemaStore(t) // a pass reads every queue of its schema
		store.SetStatsSlice(st, 2)
		name, empty, fan := uniq("stats"), uniq("stats-empty"), uniq("stats-fan")
		p := partition(t, st, name, "a")
		p2 := partition(t, st, name, "b")
		configure(t, st, empty, store.QueueOptions{})
		push(t, st, p, "1", "2", "3", "4")
		push(t, st, p2, "x")
		pop(t, st, name, store.QueueMode, "a", 2) // 1, 2 processing
		ackDone(t, st, p, store.QueueMode, "1")
		pop(t, st, name, store.QueueMode, "a", 1) // 2 processing again
		deadLetter(t, st, p2, store.QueueMode, "x", "e")
		// Two groups at different places (the slower one's cursor counts) with overlapping live leases
		// (a message leased to both is processing once).
		f := partition(t, st, fan, "a")
		push(t, st, f, "1", "2", "3", "4", "5", "6")
		pop(t, st, fan, "g1", "a", 2)
		ackDone(t, st, f, "g1", "1", "2")
		pop(t, st, fan, "g1", "a", 2) // 3, 4
		pop(t, st, fan, "g2", "a", 3) // 1, 2, 3
		refreshStats(t, st)
		counts := func(q string) []int64 {
			var c [5]int64
			require.NoError(t, store.PoolOf(st).QueryRow(ctx, `SELECT s.total, s.pending, s.processing, s.completed, s.dead_letter
				FROM queue_stats s JOIN queues q ON q.id = s.queue_id WHERE q.name = $1`, q).Scan(&c[0], &c[1], &c[2], &c[3], &c[4]))
			return c[:]
		}
		// total, pending, processing, completed, dead letter: per partition, as PartitionCounts counts;
		// the queues span slices of two partitions.
		require.Equal(t, []int64{5, 3, 1, 1, 1}, counts(name))
		require.Equal(t, []int64{0, 0, 0, 0, 0}, counts(empty), "a queue without messages has a row")
		require.Equal(t, []int64{6, 2, 4, 0, 0}, counts(fan), "g2 has consumed nothing; 1-4 are leased")
		exact := func(q string) []int64 {
			parts, err := st.Queues().PartitionCounts(ctx, scalar[uuid.UUID](t, st, `SELECT id FROM queues WHERE name = $1`, q))
			require.NoError(t, err)
			var c [5]int64
			for _, pc := range parts {
				for i, v := range []int64{pc.Total, pc.Total - pc.Consumed - pc.Processing, pc.Processing, pc.Consumed - pc.DLQConsumed, pc.DeadLetter} {
					c[i] += v
				}
			}
			return c[:]
		}
		for _, q := range []string{name, empty, fan} {
			require.Equal(t, exact(q), counts(q), "the pass agrees with the exact counts: %s", q)
		}
		ackDone(t, st, p, store.QueueMode, "2")
		refreshStats(t, st)
		require.Equal(t, []int64{5, 3, 0, 2, 1}, counts(name), "rewritten, not added to")
		first := scalar[time.Time](t, st, `SELECT created_at FROM messages WHERE partition_id = $1 AND seq = 1`, f)
		t.Run("StatsOldest", func(t *testing.T) {
			oldest := scalar[time.Time](t, st, `SELECT s.oldest_pending_at FROM queue_stats s JOIN queues q ON q.id = s.queue_id WHERE q.name = $1`, fan)
			require.True(t, oldest.Equal(first), "the oldest message not consumed by every group")
		})

		t.Run("QueueGauges", func(t *testing.T) { // what the pass wrote, for the metrics
			gauges, err := st.Jobs().QueueGauges(ctx, 100)
			require.NoError(t, err)
			byName := map[string]store.QueueSummary{}
			for _, g := range gauges {
				byName[g.Name] = g
			}
			require.Len(t, byName, 3)
			require.Equal(t, []int64{2, 4}, []int64{byName[fan].Pending, byName[fan].Processing})
			require.True(t, byName[fan].OldestPendingAt.Equal(first))
			require.Equal(t, []int64{0, 0}, []int64{byName[empty].Pending, byName[empty].Processing})
			require.Nil(t, byName[empty].OldestPendingAt)
			gauges, err = st.Jobs().QueueGauges(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, fan, gauges[0].Name, "newest first")
		})
	})

	t.Run("StatsLockQueues", func(t *testing.T) {
		t.Parallel()
		st := schemaStore(t)
		gone, kept := uniq("stats-gone"), uniq("stats-kept")
		pg := partition(t, st, gone, "a")
		push(t, st, pg, "1")
		push(t, st, partition(t, st, kept, "a"), "1")
		refreshStats(t, st)
		push(t, st, pg, "2") // the next pass recomputes the partition of the queue deleted below
		// The queue is deleted while a pass runs: the pass waits for the delete and leaves the queue out
		// (it used to fail on queue_stats' foreign key).
		del, err := store.PoolOf(st).Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = del.Rollback(ctx) }()
		var xid int64
		require.NoError(t, del.QueryRow(ctx, `SELECT delete_queue($1), txid_current()`, gone).Scan(new(int64), &xid))
		passed := make(chan error, 1)
		go func() {
			for {
				ran, err := st.Jobs().RefreshQueueStats(ctx)
				if err != nil || ran {
					passed <- err
					return
				}
			}
		}()
		require.Eventually(t, func() bool {
			return scalar[bool](t, st, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid' AND transactionid::text::bigint = $1)`, xid)
		}, 10*time.Second, time.Millisecond, "the pass waits for the delete")
		require.NoError(t, del.Commit(ctx))
		require.NoError(t, <-passed)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM queue_stats s JOIN queues q ON q.id = s.queue_id WHERE q.name = $1`, gone))
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT s.total FROM queue_stats s JOIN queues q ON q.id = s.queue_id WHERE q.name = $1`, kept))
	})

	// What no write hands over: a lease that ends by time, a change made behind the store's back, the
	// stored counts of a partition that no longer exists.
	t.Run("StatsLeased", func(t *testing.T) {
		t.Parallel()
		st := schemaStore(t)
		name := uniq("stats-leased")
		p := partition(t, st, name, "a")
		push(t, st, p, "1", "2")
		pop(t, st, name, store.QueueMode, "a", 2)
		refreshStats(t, st)
		require.Equal(t, int64(2), statsOf(t, st, name)[2], "processing")
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1`, p)
		refreshStats(t, st)
		require.Equal(t, []int64{2, 2, 0, 0, 0}, statsOf(t, st, name), "the expired lease no longer counts")
	})

	t.Run("StatsReconcileSlice", func(t *testing.T) {
		t.Parallel()
		st := schemaStore(t)
		name := uniq("stats-sweep")
		p := partition(t, st, name, "a")
		push(t, st, p, "1", "2", "3")
		refreshStats(t, st)
		// Counts no broker handed over (as after a broker died before its hand-over), and the stored counts
		// of a partition that is gone.
		exec(t, st, `UPDATE partitions SET message_count = 1 WHERE id = $1`, p)
		qid := scalar[uuid.UUID](t, st, `SELECT id FROM queues WHERE name = $1`, name)
		exec(t, st, `INSERT INTO partition_stats (partition_id, queue_id, total, pending, processing, completed, dead_letter)
			VALUES ($1, $2, 7, 7, 0, 0, 0)`, uuid.New(), qid)
		exec(t, st, `UPDATE queue_stats SET total = total + 7, pending = pending + 7 WHERE queue_id = $1`, qid)
		require.Equal(t, []int64{10, 10, 0, 0, 0}, statsOf(t, st, name))
		refreshStats(t, st) // a schema of one queue: the sweep's slice covers it at every pass
		require.Equal(t, []int64{1, 1, 0, 0, 0}, statsOf(t, st, name))
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT count(*) FROM partition_stats`))
	})

	// Changes reach the pass that another store of the schema runs, and a whole queue's: a seek moves
	// every partition of the queue, none of them written by a push or an ack.
	t.Run("StatsDirtyAdd", func(t *testing.T) {
		t.Parallel()
		st := schemaStore(t)
		other := openStore(t, testenv.SharedDatabase(t, "store"), store.SchemaOf(st))
		name := uniq("stats-handover")
		p := partition(t, st, name, "a")
		push(t, st, p, "1", "2")
		refreshStats(t, st)
		require.Equal(t, []int64{2, 2, 0, 0, 0}, statsOf(t, st, name))
		ackDone(t, st, p, store.QueueMode, "1")
		require.NoError(t, store.HandOver(t.Context(), st))
		t.Run("StatsDirtyTake", func(t *testing.T) {
			refreshStats(t, other)
			require.Equal(t, []int64{2, 1, 0, 1, 0}, statsOf(t, st, name), "counted by the other store's pass")
		})
		_, err := st.Groups().SeekQueue(ctx, store.QueueMode, name, true, time.Time{})
		require.NoError(t, err)
		refreshStats(t, st)
		require.Equal(t, []int64{2, 0, 0, 2, 0}, statsOf(t, st, name), "the seek to the end consumed everything")
	})

	t.Run("StatsPassMark", func(t *testing.T) {
		t.Parallel()
		st := schemaStore(t)
		before := scalar[time.Time](t, st, `SELECT now()`)
		refreshStats(t, st) // nothing changed: the pass still says when the counts were current
		require.False(t, scalar[time.Time](t, st, `SELECT at FROM stats_pass`).Before(before))
	})

	t.Run("QueueOpsAdd", func(t *testing.T) {
		q := uniq("ops")
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		ops := store.QueueOps{Queue: q, PushRequests: 1, PushMessages: 2, PopRequests: 3, PopMessages: 4, PopEmpty: 5,
			AckSuccess: 6, AckFailed: 7, DLQ: 8, LagSumMs: 9, LagCount: 10, LagMaxMs: 11}
		require.NoError(t, st.Jobs().AddQueueOps(ctx, at, "b1", []store.QueueOps{ops}))
		more := ops
		more.LagMaxMs = 5
		require.NoError(t, st.Jobs().AddQueueOps(ctx, at.Add(30*time.Second), "b1", []store.QueueOps{more})) // same minute: added up
		require.NoError(t, st.Jobs().AddQueueOps(ctx, at, "b2", []store.QueueOps{ops}))                      // another broker: a row of its own
		require.NoError(t, st.Jobs().AddQueueOps(ctx, at.Add(time.Minute), "b1", []store.QueueOps{ops}))     // next minute: a row of its own
		require.NoError(t, st.Jobs().AddQueueOps(ctx, at, "b1", nil))
		var n int64
		var push, lagMax int64
		var bucket time.Time
		require.NoError(t, store.PoolOf(st).QueryRow(ctx, `SELECT (SELECT count(*) FROM queue_ops_history WHERE queue_name = $1), bucket, push_messages, lag_max_ms
			FROM queue_ops_history WHERE queue_name = $1 AND broker_id = 'b1' ORDER BY bucket LIMIT 1`, q).Scan(&n, &bucket, &push, &lagMax))
		require.Equal(t, int64(3), n)
		require.True(t, bucket.Equal(at.Truncate(time.Minute)))
		require.Equal(t, int64(4), push)
		require.Equal(t, int64(11), lagMax, "the lag maximum is the larger one")
	})
}

// statsOf reads a queue's row of queue_stats: total, pending, processing, completed, dead letter.
func statsOf(t *testing.T, st *store.Store, queue string) []int64 {
	t.Helper()
	var c [5]int64
	require.NoError(t, store.PoolOf(st).QueryRow(t.Context(), `SELECT s.total, s.pending, s.processing, s.completed, s.dead_letter
		FROM queue_stats s JOIN queues q ON q.id = s.queue_id WHERE q.name = $1`, queue).Scan(&c[0], &c[1], &c[2], &c[3], &c[4]))
	return c[:]
}
