package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestJobPlansSkipUnusedOptions: the background jobs' statements for per-queue options (eviction by
// maxWaitTimeSeconds, retention by age and by consumption) read no partition, cursor or message when no
// queue sets the option, with statistics taken before the queue grew from 100 to 30 000 partitions with
// a cursor each. Planned from those statistics, the eviction walked every cursor and joined the queues
// last (5.4 s per pass at 100 000 partitions in a benchmark), holding back the vacuum of every table.
func TestJobPlansSkipUnusedOptions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, c := privateConn(t)
	pool := store.PoolOf(st)
	// Statistics taken while the queue had 100 partitions with a cursor and a message each, then 30 000.
	autovacuumOff(t, pool, "messages", "partitions", "partition_consumers", "queues")
	grow := func(from, to int) {
		t.Helper()
		ids := fmt.Sprintf(`SELECT ('00000000-0000-0000-0001-' || lpad(to_hex(i), 12, '0'))::uuid AS id, i FROM generate_series(%d, %d) i`, from, to)
		_, err := pool.Exec(ctx, `
INSERT INTO queues (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'q') ON CONFLICT DO NOTHING;
INSERT INTO partitions (id, queue_id, name, last_seq)
  SELECT id, '00000000-0000-0000-0000-000000000001', 'p' || i, 1 FROM (`+ids+`) s;
INSERT INTO messages (partition_id, seq, id, transaction_id, created_at)
  SELECT id, 1, gen_random_uuid(), gen_random_uuid()::text, now() - interval '1 day' FROM (`+ids+`) s;
INSERT INTO partition_consumers (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
  SELECT id, 'g', 0, 0 FROM (`+ids+`) s`)
		require.NoError(t, err)
	}
	grow(1, 100)
	_, err := pool.Exec(ctx, "ANALYZE")
	require.NoError(t, err)
	grow(101, 30000)
	for _, s := range []struct{ name, args string }{
		{"MessageExpireWaiting", `1000, NULL`},
		{"RetentionDeleteExpired", `now(), 1000`},
		{"RetentionDeleteCompleted", `now(), 1000`},
	} {
		_, err := c.Prepare(ctx, s.name, store.Queries[s.name])
		require.NoError(t, err)
		top, plan := analyzed(t, func(opts string) string { return explainRolledBack(t, c, false, s.name, opts, s.args) })
		for _, rel := range []string{"partitions", "partition_consumers", "messages"} {
			require.Zero(t, top.rowsRead(rel), "%s: rows of %s read; plan:\n%s", s.name, rel, plan)
		}
	}
}

// TestAnalyzeOutgrownReplans: a push's generic plan built right after a VACUUM of tables a deleted
// queue had emptied (the statistics then say pending_partitions holds no row) read the partition's
// pending-work rows by a walk of the whole line index, which costs the same as the key lookup at one
// row; kept while the table grew back, every push read every row (1.6 s per push at 100 000 partitions
// in a benchmark). Once AnalyzeOutgrown has analyzed the tables that outgrew their statistics, the same
// connection's next execution is planned again and reads every hot table by its key.
func TestAnalyzeOutgrownReplans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, c := privateConn(t)
	pool := store.PoolOf(st)
	hot := store.StatisticsTables
	fill := growingTables(t, pool, hot)
	// A queue of 5 000 partitions consumed and deleted, then a VACUUM: the statistics of an empty table.
	fill(4, 5000)
	for _, sql := range []string{`DELETE FROM pending_partitions`, `DELETE FROM partition_consumers`, `DELETE FROM redeliveries`,
		`DELETE FROM messages`, `DELETE FROM partitions WHERE id <> '` + fixturePartition(1) + `'`, `VACUUM`} {
		_, err := pool.Exec(ctx, sql)
		require.NoError(t, err)
	}
	const name = "PartitionBump"
	args := fmt.Sprintf(`'{%s}'::uuid[], '{1}'::int[], '{}'::int[], '{}'::uuid[], '{}'::int[], '{}'::text[], '', NULL`, fixturePartition(9000))
	_, err := c.Prepare(ctx, name, store.Queries[name])
	require.NoError(t, err)
	explainRolledBack(t, c, true, name, "COSTS OFF", args) // the generic plan is built now
	fill(6000, 16000)
	leading := leadingColumns(t, c)
	run := func(opts string) string { return explainRolledBack(t, c, true, name, opts, args) }
	before, _ := analyzed(t, run)
	t.Logf("before AnalyzeOutgrown: %v", checkAckPlan(before, hot, leading, ""))

	// The writes reach the statistics a moment after their commit.
	require.Eventually(t, func() bool {
		names, err := st.Jobs().AnalyzeOutgrown(ctx, 1000, 4, 10_000)
		require.NoError(t, err)
		return slices.Contains(names, "pending_partitions")
	}, 30*time.Second, 100*time.Millisecond)
	plan, text := analyzed(t, run)
	require.Empty(t, checkAckPlan(plan, hot, leading, ""), "generic plan after AnalyzeOutgrown:\n%s", text)
	names, err := st.Jobs().AnalyzeOutgrown(ctx, 1000, 4, 10_000)
	require.NoError(t, err)
	require.Empty(t, names, "nothing outgrew its statistics since")
}
