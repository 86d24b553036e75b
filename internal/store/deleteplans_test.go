package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestKeyLookupPlansAfterOneMessagePerPartition: the statements that find one message by
// (partition_id, transaction_id), their plans built while the statistics said every partition held
// one message (what autovacuum's analyze records once a queue of many partitions was deleted) and the
// unique (partition_id, transaction_id) index was about five times messages_pkey, and executed once
// p1 and p2 hold 5 001 messages each, read messages only through the unique index by both columns.
// Planned on messages_pkey by partition_id alone (the same one-row estimate, a smaller index), each
// lookup read the whole partition: 4 000-5 000 rows per lookup before migration 0024 (docs/performance.md,
// Known issue 5). Each statement is checked as the general pool plans it (custom plans first) and under
// HotPathSettings (the generic plan a connection keeps); AckResolve on a connection of the hot pool.
func TestKeyLookupPlansAfterOneMessagePerPartition(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, c := privateConn(t)
	h := hotConn(t, st)
	pool := store.PoolOf(st)
	onePerPartition(t, pool, 64)
	pid := fixturePartition
	type lookup struct {
		args string
		hot  bool // run on the hot pool's connection
	}
	lookups := map[string]lookup{
		"MessageGet":         {args: fmt.Sprintf(`'%s', 'tx-1-4000'`, pid(1))},
		"MessageDelete":      {args: fmt.Sprintf(`'%s', 'tx-1-4000'`, pid(1))},
		"TraceInsert":        {args: fmt.Sprintf(`'%s', '%s', 'tx-1-4000', 'info', '{}'::jsonb, NULL, NULL`, uuid.New(), pid(1))},
		"TraceListByName":    {args: `'n', 10, 0`},
		"MessageExistingIDs": {args: fmt.Sprintf(`'{0,1}'::int[], '{%[1]s,%[1]s}'::uuid[], '{tx-1-4000,nope}'::text[]`, pid(1))},
		// The duplicate probe of a push that looks its rows up (after a copy met a duplicate).
		"PartitionBump": {args: fmt.Sprintf(`'{%[1]s}'::uuid[], '{2}'::int[], '{0,1}'::int[], '{%[1]s,%[1]s}'::uuid[], '{1,2}'::int[],
			'{tx-1-4000,fresh}'::text[], '%s', NULL`, pid(1), store.QueueMode)},
		// An ack outside every lease: the lookup by key alone.
		"AckResolve": {args: fmt.Sprintf(`'{%[1]s}'::uuid[], '{tx-1-4000}'::text[], '{g9}'::text[]`, pid(1)), hot: true},
	}
	grown := false
	for _, settings := range []bool{false, true} {
		run := func(name, opts string) string {
			t.Helper()
			l := lookups[name]
			if l.hot {
				return explainRolledBack(t, h, false, name, opts, l.args)
			}
			return explainRolledBack(t, c, settings || name == "PartitionBump", name, opts, l.args)
		}
		// Build (and cache on the connections) the plans while every partition holds one message.
		for name, l := range lookups {
			cn := c
			if l.hot {
				cn = h
			}
			_, err := cn.Prepare(ctx, name, store.Queries[name])
			require.NoError(t, err)
			run(name, "FORMAT JSON, ANALYZE")
		}
		if !grown {
			twoLeases(t, pool)
			// A trace of a message of p1 under the name TraceListByName lists.
			_, err := pool.Exec(ctx, fmt.Sprintf(`
WITH tr AS (
    INSERT INTO message_traces (id, partition_id, transaction_id, message_id, data)
    SELECT gen_random_uuid(), partition_id, transaction_id, id, '{}' FROM messages
    WHERE partition_id = '%s' AND transaction_id = 'tx-1-4000'
    RETURNING id)
INSERT INTO message_trace_names (trace_id, trace_name) SELECT id, 'n' FROM tr`, pid(1)))
			require.NoError(t, err)
			grown = true
		}
		for name := range lookups {
			top, plan := analyzed(t, func(opts string) string { return run(name, opts) })
			probes := 0
			for _, n := range messageProbes(top) {
				if strings.Contains(n.IndexCond, "seq") {
					continue // AckResolve's read of a lease's range, by both columns of messages_pkey
				}
				probes++
				require.Equal(t, "messages_partition_id_transaction_id_key", n.Index, "%s (settings %t): generic plan:\n%s", name, settings, plan)
				require.Contains(t, n.IndexCond, "(transaction_id = ", "%s (settings %t): generic plan:\n%s", name, settings, plan)
				require.Zero(t, n.RowsRemoved, "%s (settings %t): generic plan:\n%s", name, settings, plan)
			}
			require.Equal(t, 1, probes, "%s (settings %t): lookups of messages; generic plan:\n%s", name, settings, plan)
			cn := c
			if lookups[name].hot {
				cn = h
			}
			require.NoError(t, cn.Deallocate(ctx, name))
		}
	}
}
