package store_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestAckCompletionsPlans: AckCompletions, a hot statement (its plans on empty and fresh tables are
// TestHotPathPlans'), checked as TestAckPlansAfterSmallTables and
// TestAckResolvePlanAfterOneMessagePerPartition check the other ack statements: built on three analyzed
// partitions and executed once the tables hold 5 000, it touches only the keys it is given; built while
// every partition held one message, it still reads messages by the leases' seq ranges (Known issue 12).
func TestAckCompletionsPlans(t *testing.T) {
	t.Parallel()
	const name = "AckCompletions"
	t.Run("after small tables", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st, c := privateConn(t)
		h := hotConn(t, st)
		hot := store.StatisticsTables
		fill := growingTables(t, store.PoolOf(st), hot)
		pid := fixturePartition
		lease := uuid.New()
		// g1 holds a live lease on partitions 1000 and 4000 that delivered seqs 11-20: a partial ack, a
		// whole-lease ack and a repeated completion, all applied. The second argument list adds g2 of
		// partition 1000, which has a redelivery: declined.
		applied := fmt.Sprintf(`'{%[1]s,%[1]s,%[2]s}'::uuid[], '{g1,g1,g1}'::text[], '{tx-1000-15,tx-1000-3,tx-4000-20}'::text[],
			'{%[3]s,NULL,NULL}'::uuid[], NULL`, pid(1000), pid(4000), lease)
		declined := fmt.Sprintf(`'{%[1]s,%[1]s}'::uuid[], '{g1,g2}'::text[], '{tx-1000-15,tx-1000-12}'::text[], '{NULL,NULL}'::uuid[], NULL`, pid(1000))

		_, err := h.Prepare(ctx, name, store.Queries[name])
		require.NoError(t, err)
		explainRolledBack(t, h, false, name, "FORMAT JSON, ANALYZE", fmt.Sprintf(`'{%s}'::uuid[], '{g1}'::text[], '{tx-1-3}'::text[], '{NULL}'::uuid[], NULL`, pid(1)))

		fill(4, 5000)
		_, err = c.Exec(ctx, `UPDATE partition_consumers SET lease_id = $1, lease_expires_at = now() + interval '1 hour',
			claim_cursor_seq = 10, delivered_seq = 20 WHERE partition_id = ANY ($2::uuid[]) AND consumer_group = 'g1'`,
			lease, []uuid.UUID{uuid.MustParse(pid(1000)), uuid.MustParse(pid(4000))})
		require.NoError(t, err)
		leading := leadingColumns(t, c)

		for _, args := range []string{applied, declined} {
			out := explainRolledBack(t, h, false, name, "FORMAT JSON, ANALYZE, BUFFERS", args)
			var doc []struct{ Plan planNode }
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			text := explainRolledBack(t, h, false, name, "COSTS OFF", args)
			for _, bad := range checkAckPlan(doc[0].Plan, hot, leading, "") {
				t.Errorf("%s: %s; generic plan:\n%s", name, bad, text)
			}
			rows := float64(3)
			if args == declined {
				rows = 0
			}
			require.Equal(t, rows, doc[0].Plan.Rows, "rows answered; generic plan:\n%s", text)
		}
	})
	t.Run("after one message per partition", func(t *testing.T) {
		// As TestAckResolvePlanAfterOneMessagePerPartition: planned while every partition held one
		// message with a long transaction id, AckCompletions still reads the acked leases' messages by
		// their seq range on messages_pkey, and looks up by key alone only the item in no lease.
		t.Parallel()
		ctx := t.Context()
		st, _ := privateConn(t)
		h := hotConn(t, st)
		pool := store.PoolOf(st)
		onePerPartition(t, pool, 64)
		pid := fixturePartition
		args := fmt.Sprintf(`'{%[1]s,%[2]s,%[2]s}'::uuid[], '{g1,g2,g2}'::text[], '{tx-1-4000,tx-2-17,tx-2-17x}'::text[],
			'{NULL,NULL,NULL}'::uuid[], NULL`, pid(1), pid(2))
		run := func(opts string) string {
			t.Helper()
			return explainRolledBack(t, h, false, name, opts, args)
		}
		_, err := h.Prepare(ctx, name, store.Queries[name])
		require.NoError(t, err)
		run("FORMAT JSON, ANALYZE")

		twoLeases(t, pool)

		top, plan := analyzed(t, run)
		require.Zero(t, top.Rows, "the unknown item declines the batch; generic plan:\n%s", plan)
		probes := messageProbes(top)
		require.Len(t, probes, 2, "generic plan:\n%s", plan)
		for _, n := range probes {
			if strings.Contains(n.IndexCond+n.Filter, "delivered_seq") {
				// The leases' ranges: at most their ten messages per lookup.
				require.Equal(t, "messages_pkey", n.Index, "generic plan:\n%s", plan)
				require.Contains(t, n.IndexCond, "delivered_seq)", "generic plan:\n%s", plan)
				require.LessOrEqual(t, n.RowsRemoved, float64(3*10), "generic plan:\n%s", plan)
				continue
			}
			// The unbounded lookup runs for the one item that is in no lease (its index may be either,
			// as AckResolve's).
			require.Equal(t, float64(1), n.Loops, "unbounded lookups; generic plan:\n%s", plan)
		}
	})
}
