package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestStatus covers queries/status.sql: the live lease and dead-letter summaries. They count the whole
// schema, so this test has one of its own.
func TestStatus(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()

	t.Run("LeaseSummary+DeadLetterTotals+DeadLetterTopErrors", func(t *testing.T) {
		l, d, err := st.Analytics().Overview(ctx)
		require.NoError(t, err)
		require.Equal(t, store.LeaseSummary{}, l)
		require.Equal(t, store.DLQSummary{TopErrors: []store.ErrorCount{}}, d)

		name := uniq("status")
		pa, pb := partition(t, st, name, "a"), partition(t, st, name, "b")
		push(t, st, pa, "1", "2", "3")
		push(t, st, pb, "1", "2", "3", "4", "5", "6", "7")
		pop(t, st, name, store.QueueMode, "a", 2)
		pop(t, st, name, "g", "a", 10)
		pop(t, st, name, store.QueueMode, "b", 10)
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1 AND consumer_group = 'g'`, pa)
		errs := []string{"e1", "e1", "e2", "e3", "e4", "e5", "e6"}
		for i, e := range errs {
			p, tx := pb, []string{"1", "2", "3", "4", "5", "6", "7"}[i]
			deadLetter(t, st, p, "g", tx, e)
		}
		deadLetter(t, st, pa, "g", "1", "e2")
		deadLetter(t, st, pa, "g", "2", "e2")
		l, d, err = st.Analytics().Overview(ctx)
		require.NoError(t, err)
		// Live leases: two (the expired one is not counted), on two partitions, delivering 2 + 7.
		require.Equal(t, store.LeaseSummary{Active: 2, Partitions: 2, Messages: 9}, l)
		require.Equal(t, int64(9), d.Total)
		require.Equal(t, int64(2), d.Partitions)
		// The five most frequent errors, then by text.
		require.Equal(t, []store.ErrorCount{{"e2", 3}, {"e1", 2}, {"e3", 1}, {"e4", 1}, {"e5", 1}}, d.TopErrors)
	})
}
