package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestEviction covers queries/eviction.sql: messages that waited longer than their queue's
// maxWaitTimeSeconds become dead letters of the groups still waiting for them.
func TestEviction(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()

	t.Run("MessageExpireWaiting", func(t *testing.T) {
		name, patient := uniq("evict"), uniq("patient")
		p := configure(t, st, name, store.QueueOptions{MaxWaitTimeSeconds: 60})
		pp := configure(t, st, patient, store.QueueOptions{})
		push(t, st, p, "1", "2", "3")
		push(t, st, pp, "1")
		backdate(t, st, p, time.Hour)
		backdate(t, st, pp, time.Hour)
		push(t, st, p, "fresh")
		// Cursors: the queue mode has consumed 1; "leased" holds a live lease; "late" is at 0.
		ackDone(t, st, p, store.QueueMode, "1")
		ackDone(t, st, pp, store.QueueMode, "1")
		pop(t, st, name, "leased", "Default", 1)
		_, err := st.Groups().SeekPartition(ctx, "late", name, "Default")
		require.NoError(t, err)
		exec(t, st, `UPDATE partition_consumers SET cursor_seq = 0 WHERE consumer_group = 'late'`)

		n, err := st.Jobs().ExpireWaiting(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, int64(3), n, "at most the limit, in (partition, group, seq) order")
		n, err = st.Jobs().ExpireWaiting(ctx, 100)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "2 and 3 for the queue mode, 1 to 3 for late: 5 in all")
		n, err = st.Jobs().ExpireWaiting(ctx, 100)
		require.NoError(t, err)
		require.Zero(t, n, "nothing left")

		dead := func(group string) []string {
			rows, _, err := st.DeadLetters().ListDeadLetters(ctx, store.DLQFilter{Queue: name, Group: group, Limit: 10})
			require.NoError(t, err)
			out := []string{}
			for _, r := range rows {
				require.Equal(t, "max wait time exceeded", *r.Error)
				out = append(out, r.TransactionID)
			}
			return out
		}
		require.ElementsMatch(t, []string{"2", "3"}, dead(store.QueueMode))
		require.ElementsMatch(t, []string{"1", "2", "3"}, dead("late"))
		require.Empty(t, dead("leased"), "a live lease is left alone")
		cursor := func(group string) int64 {
			return scalar[int64](t, st, `SELECT cursor_seq FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, p, group)
		}
		require.Equal(t, []int64{3, 3, 0}, []int64{cursor(store.QueueMode), cursor("late"), cursor("leased")}, "past the expired, before the fresh")
		rows, _, err := st.DeadLetters().ListDeadLetters(ctx, store.DLQFilter{Queue: patient, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, rows, "a queue without maxWaitTimeSeconds")
	})

	t.Run("MessageExpireWaiting+never-read", func(t *testing.T) {
		// A partition nobody read is before its first message: its expired messages go to the dead
		// letters of each group of the queue, queue mode included when nobody named consumes it.
		name := uniq("evict-unread")
		p := configure(t, st, name, store.QueueOptions{MaxWaitTimeSeconds: 60})
		push(t, st, p, "old")
		backdate(t, st, p, time.Hour)
		push(t, st, p, "fresh")
		n, err := st.Jobs().ExpireWaiting(ctx, 100)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT cursor_seq FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, p, store.QueueMode),
			"queue mode, the queue's only group, now has a cursor after the expired message")
		// A subscribed group that never read a new partition: its expired messages go to its dead letters.
		g := uniq("g")
		ok, err := st.Groups().EnsureSubscription(ctx, name, g, store.SubscribeAll, time.Time{})
		require.NoError(t, err)
		require.True(t, ok)
		n, err = st.Jobs().ExpireWaiting(ctx, 100)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "old, for the group")
		rows, _, err := st.DeadLetters().ListDeadLetters(ctx, store.DLQFilter{Queue: name, Group: g, Limit: 10})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, "old", rows[0].TransactionID)
	})
}
