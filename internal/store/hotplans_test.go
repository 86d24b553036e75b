package store_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestHotPathPlans: the generic plans of the pop, push and ack statements, built under HotPathSettings
// right after the tables were analyzed empty (the worst moment: a connection keeps that plan while the
// tables grow), read every table through an index. A sequential scan of messages in AckResolve's plan
// cost 10-12 ms per ack in the fan-out benchmark once the queue had grown.
func TestHotPathPlans(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), store.Options{URL: testenv.NewDatabase(t)})
	require.NoError(t, err)
	defer st.Close()
	conn, err := store.PoolOf(st).Acquire(t.Context())
	require.NoError(t, err)
	defer conn.Release()
	c := conn.Conn()
	_, err = c.Exec(t.Context(), `ANALYZE`)
	require.NoError(t, err)

	tx, err := c.Begin(t.Context())
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(t.Context()) }()
	_, err = tx.Exec(t.Context(), store.Queries["HotPathSettings"], true)
	require.NoError(t, err)
	for _, name := range []string{"Pop", "PartitionBump", "ConsumerLock", "AckResolve", "AckApply", "PendingForgetConsumed"} {
		sd, err := tx.Prepare(t.Context(), name, store.Queries[name])
		require.NoError(t, err, name)
		args := make([]string, len(sd.ParamOIDs))
		for i := range args {
			args[i] = "NULL"
		}
		rows, err := tx.Query(t.Context(), `EXPLAIN (COSTS OFF) EXECUTE "`+name+`"(`+strings.Join(args, ",")+`)`)
		require.NoError(t, err, name)
		var plan strings.Builder
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan.WriteString(line + "\n")
		}
		require.NoError(t, rows.Err(), name)
		require.NotContains(t, plan.String(), "Seq Scan", "%s's generic plan:\n%s", name, plan.String())
	}
}
