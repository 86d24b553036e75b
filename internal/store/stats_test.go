package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestStats covers queries/stats.sql: the rolled-up queue counts and the per-broker operation counters.
func TestStats(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	t.Run("StatsRefresh", func(t *testing.T) {
		name, empty := uniq("stats"), uniq("stats-empty")
		p := partition(t, st, name, "a")
		p2 := partition(t, st, name, "b")
		configure(t, st, empty, store.QueueOptions{})
		push(t, st, p, "1", "2", "3", "4")
		push(t, st, p2, "x")
		pop(t, st, name, store.QueueMode, "a", 2) // 1, 2 processing
		ackDone(t, st, p, store.QueueMode, "1")
		pop(t, st, name, store.QueueMode, "a", 1) // 2 processing again
		deadLetter(t, st, p2, store.QueueMode, "x", "e")
		refreshStats(t, st)
		counts := func(q string) []int64 {
			var c [5]int64
			require.NoError(t, store.PoolOf(st).QueryRow(ctx, `SELECT s.total, s.pending, s.processing, s.completed, s.dead_letter
				FROM queue_stats s JOIN queues q ON q.id = s.queue_id WHERE q.name = $1`, q).Scan(&c[0], &c[1], &c[2], &c[3], &c[4]))
			return c[:]
		}
		// total, pending, processing, completed, dead letter: per partition, as PartitionCounts counts.
		require.Equal(t, []int64{5, 3, 1, 1, 1}, counts(name))
		require.Equal(t, []int64{0, 0, 0, 0, 0}, counts(empty), "a queue without messages has a row")
		ackDone(t, st, p, store.QueueMode, "2")
		refreshStats(t, st)
		require.Equal(t, []int64{5, 3, 0, 2, 1}, counts(name), "rewritten, not added to")
	})

	t.Run("QueueOpsAdd", func(t *testing.T) {
		q := uniq("ops")
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		ops := store.QueueOps{Queue: q, PushRequests: 1, PushMessages: 2, PopRequests: 3, PopMessages: 4, PopEmpty: 5,
			AckSuccess: 6, AckFailed: 7, DLQ: 8, LagSumMs: 9, LagCount: 10, LagMaxMs: 11}
		require.NoError(t, st.AddQueueOps(ctx, at, "b1", []store.QueueOps{ops}))
		more := ops
		more.LagMaxMs = 5
		require.NoError(t, st.AddQueueOps(ctx, at.Add(30*time.Second), "b1", []store.QueueOps{more})) // same minute: added up
		require.NoError(t, st.AddQueueOps(ctx, at, "b2", []store.QueueOps{ops}))                      // another broker: a row of its own
		require.NoError(t, st.AddQueueOps(ctx, at.Add(time.Minute), "b1", []store.QueueOps{ops}))     // next minute: a row of its own
		require.NoError(t, st.AddQueueOps(ctx, at, "b1", nil))
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
