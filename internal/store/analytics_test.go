package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestAnalytics covers queries/analytics.sql: the bucketed operation counters and retention history.
func TestAnalytics(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()
	// A day of the past no other test (nor an earlier -count run on the shared database) writes to.
	base := time.Date(2020, 1, 1, 10, 0, 0, 0, time.UTC).AddDate(0, 0, int(uniqN.Add(1)))

	t.Run("QueueOpsSeries", func(t *testing.T) {
		a, b := uniq("ops-a"), uniq("ops-b")
		one := func(q string, pushes, lag int64) store.QueueOps {
			return store.QueueOps{Queue: q, PushMessages: pushes, LagMaxMs: lag, LagCount: 1}
		}
		require.NoError(t, st.Jobs().AddQueueOps(ctx, base, "b1", []store.QueueOps{one(a, 1, 10), one(b, 100, 1)}))
		require.NoError(t, st.Jobs().AddQueueOps(ctx, base.Add(2*time.Minute), "b2", []store.QueueOps{one(a, 2, 30)}))
		require.NoError(t, st.Jobs().AddQueueOps(ctx, base.Add(5*time.Minute), "b1", []store.QueueOps{one(a, 4, 20)}))
		require.NoError(t, st.Jobs().AddQueueOps(ctx, base.Add(time.Hour), "b1", []store.QueueOps{one(a, 8, 0)}))
		got, err := st.Analytics().QueueOpsSeries(ctx, base, base.Add(10*time.Minute), a, 5)
		require.NoError(t, err)
		require.Len(t, got, 2, "the hour after is outside the range")
		// Newest bucket first; buckets sum over brokers, the lag maximum is the maximum.
		require.True(t, got[0].Bucket.Equal(base.Add(5*time.Minute)))
		require.Equal(t, []int64{4, 20, 1}, []int64{got[0].PushMessages, got[0].LagMaxMs, got[0].LagCount})
		require.True(t, got[1].Bucket.Equal(base))
		require.Equal(t, []int64{3, 30, 2}, []int64{got[1].PushMessages, got[1].LagMaxMs, got[1].LagCount})
		all, err := st.Analytics().QueueOpsSeries(ctx, base, base.Add(time.Minute), "", 60)
		require.NoError(t, err)
		require.Len(t, all, 2, "every queue, one row each")
		require.Equal(t, []string{a, b}, []string{all[0].Queue, all[1].Queue})
	})

	t.Run("RetentionSeries", func(t *testing.T) {
		q := uniq("ret")
		// Retention records its history at its Now: three passes, two kinds.
		exec(t, st, `INSERT INTO retention_history (queue_name, kind, deleted, executed_at) VALUES
			($1, 'retention', 2, $2), ($1, 'retention', 3, $3), ($1, 'completed_retention', 5, $3), (NULL, 'retention', 7, $4)`,
			q, base.Add(time.Minute), base.Add(4*time.Minute), base.Add(20*time.Minute))
		got, err := st.Analytics().RetentionSeries(ctx, base, base.Add(10*time.Minute), 5)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.True(t, got[0].Bucket.Equal(base))
		require.Equal(t, []store.RetentionPoint{
			{Bucket: got[0].Bucket, Queue: q, Kind: "completed_retention", Deleted: 5},
			{Bucket: got[0].Bucket, Queue: q, Kind: "retention", Deleted: 5},
		}, got)
		got, err = st.Analytics().RetentionSeries(ctx, base.Add(15*time.Minute), base.Add(30*time.Minute), 5)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Empty(t, got[0].Queue, "a row without a queue")
	})
}
