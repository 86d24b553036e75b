package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestPending covers queries/pending.sql: rebuilding a group's pending-work records after its cursors
// moved other than by consuming (here: seeks, which call it).
func TestPending(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	t.Run("PendingRefresh", func(t *testing.T) {
		q := uniq("pending")
		pa, pb := partition(t, st, q, "a"), partition(t, st, q, "b")
		push(t, st, pa, "a1")
		push(t, st, pb, "b1")
		ok, err := st.Groups().EnsureSubscription(ctx, q, "g", store.SubscribeAll, time.Time{})
		require.NoError(t, err)
		require.True(t, ok)
		_, err = st.Groups().SeekPartition(ctx, "g", q, "a")
		require.NoError(t, err)
		// Seeking the queue to its end places the group at the end of every partition, b (never read)
		// included: both records go, the queue mode's stay.
		_, err = st.Groups().SeekQueue(ctx, "g", q, true, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode}, pending(t, st, pa))
		require.Equal(t, []string{store.QueueMode}, pending(t, st, pb))
		// Seeking back before the messages gives the work back.
		_, err = st.Groups().SeekQueue(ctx, "g", q, false, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode, "g"}, pending(t, st, pa))
		require.Equal(t, []string{store.QueueMode, "g"}, pending(t, st, pb))
		// A group that seeks a queue it never popped subscribes to it, and its work is recorded.
		_, err = st.Groups().SeekPartition(ctx, "seeker", q, "a")
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode, "g", "seeker"}, pending(t, st, pb))
		_, err = st.Groups().SeekQueue(ctx, "seeker", q, false, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode, "g", "seeker"}, pending(t, st, pa))
	})

	t.Run("PendingWork", func(t *testing.T) {
		q := uniq("pending")
		pa := partition(t, st, q, "a")
		partition(t, st, q, "b")
		push(t, st, pa, "a1")
		keys := []store.PendingKey{
			{Queue: q, Partition: "a", Group: store.QueueMode},          // a message not consumed: work
			{Queue: q, Partition: "b", Group: store.QueueMode},          // no message: none
			{Queue: q, Partition: "a", Group: "never"},                  // a group never subscribed: none
			{Queue: q, Partition: "c", Group: store.QueueMode},          // no such partition
			{Queue: uniq("nq"), Partition: "a", Group: store.QueueMode}, // no such queue
			{Queue: q, Partition: "a", Group: store.QueueMode},          // a key may repeat
		}
		work, err := st.PendingWork(ctx, keys)
		require.NoError(t, err)
		require.Equal(t, []bool{true, false, false, false, false, true}, work)
		empty, err := st.PendingWork(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, empty)
	})
}
