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
		ok, err := st.EnsureSubscription(ctx, q, "g", store.SubscribeAll, time.Time{})
		require.NoError(t, err)
		require.True(t, ok)
		_, err = st.SeekPartition(ctx, "g", q, "a")
		require.NoError(t, err)
		// Seeking the queue to its end moves the group's one cursor (on a): a's record goes, the queue
		// mode's stays, and b, where the group has no cursor yet, still has its work.
		_, err = st.SeekQueue(ctx, "g", q, true, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode}, pending(t, st, pa))
		require.Equal(t, []string{store.QueueMode, "g"}, pending(t, st, pb))
		// Seeking back before the messages gives the work back.
		_, err = st.SeekQueue(ctx, "g", q, false, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode, "g"}, pending(t, st, pa))
		require.Equal(t, []string{store.QueueMode, "g"}, pending(t, st, pb))
		// A group without a subscription on the queue keeps no records there, whatever its cursors.
		_, err = st.SeekPartition(ctx, "unsubscribed", q, "a")
		require.NoError(t, err)
		_, err = st.SeekQueue(ctx, "unsubscribed", q, false, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{store.QueueMode, "g"}, pending(t, st, pa))
	})
}
