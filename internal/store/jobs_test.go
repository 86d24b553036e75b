package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestJobs covers queries/jobs.sql: one broker runs each background pass, the others skip it.
func TestJobs(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()

	t.Run("JobTryLock", func(t *testing.T) {
		require.Equal(t, []bool{true, true}, jobPasses(t, st))
		// Another broker inside a pass holds the keys for its transaction.
		other := holdJobLocks(t, st)
		require.Equal(t, []bool{false, false}, jobPasses(t, st))
		require.NoError(t, other.Rollback(ctx))
		require.Equal(t, []bool{true, true}, jobPasses(t, st))
		// The lock is the transaction's: a pass leaves it free.
		require.True(t, scalar[bool](t, st, `SELECT pg_try_advisory_lock(k) AND pg_advisory_unlock(k)
			FROM (SELECT hashtextextended(current_schema() || ':' || $1, 0) AS k) x`, store.EvictionJob))
	})
	t.Run("JobTryLock+schemas", func(t *testing.T) {
		// Two brokers on two schemas of one database: each runs its own schema's passes while the
		// other's are held, since the keys hash the schema.
		a, b := schemaStore(t), schemaStore(t)
		other := holdJobLocks(t, a)
		require.Equal(t, []bool{false, false}, jobPasses(t, a), "a's keys are held")
		require.Equal(t, []bool{true, true}, jobPasses(t, b), "b's keys are its own")
		require.NoError(t, other.Rollback(ctx))
		require.Equal(t, []bool{true, true}, jobPasses(t, a))
	})
	t.Run("PendingDeadRows+VacuumPendingPartitions", func(t *testing.T) {
		// A schema of its own: the check reads the dead rows of the schema's table only.
		st := schemaStore(t)
		q := queueOfPartitions(t, st, "churn", 40)
		vacuumed, err := st.Jobs().VacuumPending(ctx, 20)
		require.NoError(t, err)
		require.False(t, vacuumed, "40 live rows and no dead one")
		ok, err := st.Queues().DeleteQueue(ctx, q)
		require.NoError(t, err)
		require.True(t, ok)
		// 40 dead rows and no live one. A session reports its dead rows to the statistics a moment after
		// its commit.
		require.Eventually(t, func() bool {
			vacuumed, err := st.Jobs().VacuumPending(ctx, 20)
			require.NoError(t, err)
			return vacuumed
		}, 30*time.Second, 50*time.Millisecond)
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT count(*) FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'pending_partitions' AND n_dead_tup = 0 AND vacuum_count = 1`))
		vacuumed, err = st.Jobs().VacuumPending(ctx, 20)
		require.NoError(t, err)
		require.False(t, vacuumed, "nothing is due once the dead rows are gone")
	})
	t.Run("StatisticsOutgrown+AnalyzeTable", func(t *testing.T) {
		// A schema of its own: the check reads the schema's tables only.
		st := schemaStore(t)
		queueOfPartitions(t, st, "grow", 40)
		// 40 partitions and messages against statistics that were never taken. A session reports its
		// writes to the statistics a moment after its commit.
		var names []string
		require.Eventually(t, func() bool {
			var err error
			names, err = st.Jobs().AnalyzeOutgrown(ctx, 20, 4, 1e9)
			require.NoError(t, err)
			return slices.Contains(names, "partitions")
		}, 30*time.Second, 50*time.Millisecond)
		require.Subset(t, store.StatisticsTables, names)
		// The 40 and the queue's default partition.
		require.Equal(t, int64(41), scalar[int64](t, st, `SELECT c.reltuples::bigint FROM pg_class c
			WHERE c.oid = to_regclass(quote_ident(current_schema()) || '.partitions')`))
		names, err := st.Jobs().AnalyzeOutgrown(ctx, 20, 4, 1e9)
		require.NoError(t, err)
		require.NotContains(t, names, "partitions", "its statistics now count its rows")

		// 200 more partitions: more than 4 times the 41 the statistics count, which settled leaves alone
		// when they count that many already.
		queueOfPartitions(t, st, "grow-more", 200)
		require.Eventually(t, func() bool {
			return scalar[int64](t, st, `SELECT n_live_tup FROM pg_stat_user_tables
				WHERE schemaname = current_schema() AND relname = 'partitions'`) >= 241
		}, 30*time.Second, 50*time.Millisecond)
		names, err = st.Jobs().AnalyzeOutgrown(ctx, 20, 4, 41)
		require.NoError(t, err)
		require.NotContains(t, names, "partitions", "statistics of 41 rows are settled at 41")
		names, err = st.Jobs().AnalyzeOutgrown(ctx, 20, 4, 42)
		require.NoError(t, err)
		require.Contains(t, names, "partitions")
	})
	t.Run("PendingLineSample", func(t *testing.T) {
		// A schema of its own: the counters are the schema's line index's.
		st := schemaStore(t)
		before, ok, err := st.Jobs().PendingLineSample(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		q := queueOfPartitions(t, st, "walk", 5)
		ms, _ := pop(t, st, q, store.QueueMode, "", 10)
		require.Len(t, ms, 1)
		// A session reports its counters to the statistics at the end of a transaction a second or more
		// after its last report, or once idle for 10 s: the pops go on, so that the pops' sessions report.
		var after store.PendingLine
		require.Eventually(t, func() bool {
			pop(t, st, q, store.QueueMode, "", 10)
			after, ok, err = st.Jobs().PendingLineSample(ctx)
			require.NoError(t, err)
			require.True(t, ok)
			return after.Scans > before.Scans && after.Entries >= before.Entries+5
		}, 30*time.Second, 200*time.Millisecond)
		// Five rows joined the line and the claimed ones moved to its back; the walks read pages.
		require.Greater(t, after.Pages, before.Pages)
		require.GreaterOrEqual(t, after.IndexPages, int64(2), "a metapage and a root")
	})

}

// jobPasses runs each background pass of st once and reports whether the stats and retention passes
// ran (the eviction pass does not say).
func jobPasses(t *testing.T, st *store.Store) []bool {
	t.Helper()
	ctx := t.Context()
	stats, err := st.Jobs().RefreshQueueStats(ctx)
	require.NoError(t, err)
	ret, err := st.Jobs().RunRetention(ctx, store.RetentionParams{Now: time.Now(), BatchSize: 10, PartitionCleanupDays: 7, MetricsRetentionDays: 30})
	require.NoError(t, err)
	_, err = st.Jobs().ExpireWaiting(ctx, 10)
	require.NoError(t, err)
	return []bool{stats, ret.Ran}
}

// holdJobLocks takes st's stats and retention job locks in a transaction of its own, as a broker
// inside its passes would, and returns the transaction; the caller ends it.
func holdJobLocks(t *testing.T, st *store.Store) pgx.Tx {
	t.Helper()
	tx, err := store.PoolOf(st).Begin(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':' || j, 0))
		FROM unnest($1::text[]) j`, []string{store.StatsJob, store.RetentionJob})
	require.NoError(t, err)
	return tx
}

// queueOfPartitions configures a new queue named after prefix with n partitions ("0" to n-1) of one
// message each, and returns its name.
func queueOfPartitions(t *testing.T, st *store.Store, prefix string, n int) string {
	t.Helper()
	q := uniq(prefix)
	configure(t, st, q, store.QueueOptions{})
	for i := range n {
		push(t, st, partition(t, st, q, fmt.Sprint(i)), uniq("tx"))
	}
	return q
}
