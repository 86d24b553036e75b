package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNormalizePushItemOneRuleForEveryWayIn: a push, a transaction's operation, a stream cycle's
// push_items and a spool replay apply the same rule; only the push keeps the original's bare message
// for a missing queue.
func TestNormalizePushItemOneRuleForEveryWayIn(t *testing.T) {
	for _, c := range []struct {
		array string
		i     int
		want  string
	}{
		{pushArray, 2, "queue is required"},
		{"operations", 2, "operations[2]: queue is required"},
		{"push_items", 0, "push_items[0]: queue is required"},
		{"spooled item", -1, "spooled item: queue is required"},
	} {
		err := NormalizePushItem(&PushItem{}, c.array, c.i)
		require.EqualError(t, err, c.want)
		var inv *InvalidError
		require.ErrorAs(t, err, &inv)
	}

	it := PushItem{Queue: "q"}
	require.NoError(t, NormalizePushItem(&it, "operations", 0))
	require.Equal(t, DefaultPartition, it.Partition)
	require.NotEmpty(t, it.TransactionID)
	require.True(t, it.minted, "a fresh id needs no duplicate probe")
	given := PushItem{Queue: "q", Partition: "p", TransactionID: "t"}
	require.NoError(t, NormalizePushItem(&given, pushArray, 0))
	require.Equal(t, PushItem{Queue: "q", Partition: "p", TransactionID: "t"}, given)

	for _, it := range []PushItem{
		{Queue: strings.Repeat("q", 256)},
		{Queue: "q", Partition: "a\x00b"},
		{Queue: "q", TransactionID: "\xff"},
	} {
		err := NormalizePushItem(&it, "push_items", 1)
		require.ErrorContains(t, err, "bad body: push_items[1].")
	}
}
