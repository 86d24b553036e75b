package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestJobs covers queries/jobs.sql: one broker runs each background pass, the others skip it.
func TestJobs(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := t.Context()

	t.Run("JobTryLock", func(t *testing.T) {
		const evictionKey = 737099
		passes := func() []bool {
			t.Helper()
			stats, err := st.RefreshQueueStats(ctx)
			require.NoError(t, err)
			ret, err := st.RunRetention(ctx, store.RetentionParams{Now: time.Now(), BatchSize: 10, PartitionCleanupDays: 7, MetricsRetentionDays: 30})
			require.NoError(t, err)
			_, err = st.ExpireWaiting(ctx, evictionKey, 10)
			require.NoError(t, err)
			// ExpireWaiting does not say whether it ran; the lock is free again once it returns.
			return []bool{stats, ret.Ran}
		}
		require.Equal(t, []bool{true, true}, passes())
		// Another broker inside a pass holds the keys for its transaction.
		other, err := store.PoolOf(st).Begin(ctx)
		require.NoError(t, err)
		_, err = other.Exec(ctx, `SELECT pg_advisory_xact_lock($1), pg_advisory_xact_lock($2)`, store.StatsLockKey, store.RetentionLockKey)
		require.NoError(t, err)
		require.Equal(t, []bool{false, false}, passes())
		require.NoError(t, other.Rollback(ctx))
		require.Equal(t, []bool{true, true}, passes())
		// The lock is the transaction's: a pass leaves it free.
		require.True(t, scalar[bool](t, st, `SELECT pg_try_advisory_lock($1) AND pg_advisory_unlock($1)`, int64(evictionKey)))
	})
}
