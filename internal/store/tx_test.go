package store_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestTx: Store.Begin's transactions plan like the hot path (TxPlanSettings).
func TestTx(t *testing.T) {
	t.Parallel()
	t.Run("TxPlanSettings", txPlansAfterSmallTables)
}

// txPlansAfterSmallTables: the statements an explicit transaction runs (the API's transaction
// route: the ack's lock and resolve and its pending-work cleanup, the push's lock, bump with its duplicate probe, and the
// lookup of stored ids), planned inside a transaction of Store.Begin while the tables held a handful of
// analyzed rows, still touch only the keys they are given once the tables have grown. Without the
// hot path's plan settings the route ran custom plans from whatever the statistics said: after a large
// queue's deletion AckResolve read the messages heap by partition_id alone (2.4 ms and 600 buffers per
// call) and the duplicate probe likewise (1.7 ms and 350). Synchronous commit stays on.
func txPlansAfterSmallTables(t *testing.T) {
	ctx := t.Context()
	// One connection: the plans built while the tables are small are the ones used after they grew.
	st, err := store.Open(ctx, store.Options{URL: testenv.NewDatabase(t), PoolSize: 1})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	pool := store.PoolOf(st)
	hot := []string{"messages", "partitions", "pending_partitions", "partition_consumers", "redeliveries", "queues"}

	fill := growingTables(t, pool, hot)

	// The ack statements' keys as in TestAckPlansAfterSmallTables; the push looks up one stored and one
	// new transactionId.
	pid := fixturePartition
	args := ackArgs()
	args["PartitionLock"] = fmt.Sprintf(`'{%s,%s}'::uuid[]`, pid(1000), pid(4000))
	args["PartitionBump"] = fmt.Sprintf(`'{%[1]s,%[2]s}'::uuid[], '{1,1}'::int[], '{0,1}'::int[], '{%[1]s,%[2]s}'::uuid[],
			'{1,1}'::int[], '{tx-1000-7,new-4000}'::text[], '%[3]s', NULL`, pid(1000), pid(4000), store.QueueMode)
	args["MessageExistingIDs"] = fmt.Sprintf(`'{0,1}'::int[], '{%s,%s}'::uuid[], '{tx-1000-7,tx-4000-9}'::text[]`,
		pid(1000), pid(4000))
	names := []string{"ConsumerLock", "AckResolve", "AckApply", "PendingForgetConsumed", "PartitionLock", "PartitionBump", "MessageExistingIDs"}

	// Build (and cache on the store's one connection) the plans while the tables are tiny.
	tx, err := st.Begin(ctx)
	require.NoError(t, err)
	for _, name := range names {
		_, err := store.TxConn(tx).Prepare(ctx, name, store.Queries[name])
		require.NoError(t, err, name)
		explainExecute(t, store.TxConn(tx), name, "FORMAT JSON, ANALYZE", args[name])
	}
	require.NoError(t, tx.Rollback(ctx))

	fill(4, 5000)

	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	leading := leadingColumns(t, conn.Conn())
	conn.Release()

	var syncCommit string
	require.NoError(t, pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&syncCommit))

	tx, err = st.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	require.Equal(t, syncCommit, store.TxSetting(t, tx, "synchronous_commit"), "the transaction's commit is the server's")
	require.Equal(t, "off", store.TxSetting(t, tx, "enable_seqscan"))
	// Begin sends the statement joined to its BEGIN, a text the package's record of executed queries
	// does not match; run alone it changes nothing more.
	_, err = store.TxConn(tx).Exec(ctx, store.Queries["TxPlanSettings"])
	require.NoError(t, err)
	for _, name := range names {
		out := explainExecute(t, store.TxConn(tx), name, "FORMAT JSON, ANALYZE, BUFFERS", args[name])
		var doc []struct{ Plan planNode }
		require.NoError(t, json.Unmarshal([]byte(out), &doc), name)
		text := explainExecute(t, store.TxConn(tx), name, "COSTS OFF", args[name])
		for _, bad := range checkAckPlan(doc[0].Plan, hot, leading, "") {
			t.Errorf("%s: %s; plan:\n%s", name, bad, text)
		}
	}
}
