package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestMessages covers queries/messages.sql: the message listing, one message with every group's view
// of it, and deleting one.
func TestMessages(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()
	const g = store.QueueMode

	t.Run("MessageList", func(t *testing.T) {
		name, ns := uniq("msgs"), uniq("ns")
		p := configure(t, st, name, store.QueueOptions{Namespace: ns, Task: "task", Priority: 4})
		other := partition(t, st, name, "other")
		push(t, st, p, "done", "dead", "leased", "waiting")
		push(t, st, other, "elsewhere")
		pop(t, st, name, g, "Default", 3) // done, dead, leased
		deadLetter(t, st, p, g, "dead", "x")
		ackDone(t, st, p, g, "done")
		// ackDone released the lease; lease "leased" again by hand, covering seq 1..3.
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() + interval '1 hour' WHERE partition_id = $1`, p)
		list := func(p store.ListMessagesParams) []string {
			t.Helper()
			if p.Queue == "" && p.Namespace == "" {
				p.Queue = name
			}
			if p.Limit == 0 {
				p.Limit = 100
			}
			rows, err := st.Messages().ListMessages(ctx, p)
			require.NoError(t, err)
			out := make([]string, len(rows))
			for i, r := range rows {
				out[i] = r.TransactionID + ":" + r.Status
			}
			return out
		}
		// Newest first, statuses relative to the group: its cursor is at "done", the lease covers "dead"
		// and "leased", and "dead" is one of its dead letters.
		require.Equal(t, []string{"elsewhere:pending", "waiting:pending", "leased:processing", "dead:dead_letter", "done:completed"},
			list(store.ListMessagesParams{Group: g}))
		for _, c := range []struct {
			p    store.ListMessagesParams
			want []string
		}{
			{store.ListMessagesParams{Group: g, Status: "pending"}, []string{"elsewhere:pending", "waiting:pending"}},
			{store.ListMessagesParams{Group: g, Status: "processing"}, []string{"leased:processing"}},
			{store.ListMessagesParams{Group: g, Status: "completed"}, []string{"done:completed"}},
			{store.ListMessagesParams{Group: g, Status: "dead_letter"}, []string{"dead:dead_letter"}},
			{store.ListMessagesParams{Group: g, Partition: "other"}, []string{"elsewhere:pending"}},
			{store.ListMessagesParams{Group: g, Limit: 2, Offset: 1}, []string{"waiting:pending", "leased:processing"}},
			{store.ListMessagesParams{Group: "fresh"}, []string{"elsewhere:pending", "waiting:pending", "leased:pending", "dead:pending", "done:pending"}},
			{store.ListMessagesParams{Group: g, Namespace: ns, Task: "task", Partition: "other"}, []string{"elsewhere:pending"}},
			{store.ListMessagesParams{Group: g, Namespace: uniq("nobody")}, []string{}},
		} {
			require.Equal(t, c.want, list(c.p), "%+v", c.p)
		}
		rows, err := st.Messages().ListMessages(ctx, store.ListMessagesParams{Queue: name, Group: g, Status: "processing", Limit: 10})
		require.NoError(t, err)
		r := rows[0]
		require.NotNil(t, r.LeaseExpiresAt)
		require.Equal(t, []any{name, "Default", ns, "task", int32(4), p}, []any{r.Queue, r.Partition, r.Namespace, r.Task, r.Priority, r.PartitionID})
	})

	t.Run("MessageGet+MessageConsumerList", func(t *testing.T) {
		name := uniq("get")
		p := configure(t, st, name, store.QueueOptions{LeaseTime: 30, RetryLimit: 2, RetryDelay: 5, TTL: 9, Priority: 1})
		trace := uuid.Must(uuid.NewV7())
		sub := "producer"
		id := uuid.Must(uuid.NewV7())
		_, err := st.Push(ctx, []store.PushRow{
			{PartitionID: p, TransactionID: "first", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`)},
			{PartitionID: p, TransactionID: "m", ID: id, TraceID: &trace, Payload: []byte(`{"a":1}`), ProducerSub: &sub, Encrypted: true},
		})
		require.NoError(t, err)
		for _, g := range []string{"done", "behind", "leased", "dlq", "unread"} {
			subscribe(t, st, name, g)
		}
		ackDone(t, st, p, "done", "first", "m")
		ackDone(t, st, p, "behind", "first")
		pop(t, st, name, "leased", "Default", 10)
		deadLetter(t, st, p, "dlq", "m", "bad")
		m, cs, err := st.Messages().GetMessage(ctx, p, "m")
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), m.CreatedAt, time.Minute)
		m.CreatedAt = time.Time{}
		require.Equal(t, store.MessageDetail{ID: id, TransactionID: "m", PartitionID: p, Queue: name, Partition: "Default",
			Payload: []byte(`{"a": 1}`), Encrypted: true, TraceID: &trace, ProducerSub: &sub, LeaseTime: 30, RetryLimit: 2,
			RetryDelay: 5, TTL: 9, Priority: 1, Seq: 2}, *m)
		// Every group of the queue, by name, "unread" too, which has no cursor here.
		require.Len(t, cs, 5)
		require.Equal(t, []string{"behind", "dlq", "done", "leased", "unread"}, []string{cs[0].Group, cs[1].Group, cs[2].Group, cs[3].Group, cs[4].Group})
		require.Equal(t, store.MessageConsumer{Group: "unread"}, cs[4])
		require.Equal(t, store.MessageConsumer{Group: "behind"}, cs[0])
		require.Equal(t, "bad", *cs[1].DLQError)
		require.Equal(t, int32(1), *cs[1].DLQRetries)
		require.False(t, cs[1].Consumed)
		require.Equal(t, store.MessageConsumer{Group: "done", Consumed: true}, cs[2])
		require.NotNil(t, cs[3].LeaseExpiresAt)
		require.False(t, cs[3].Consumed)
		_, _, err = st.Messages().GetMessage(ctx, p, "none")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("MessageDelete", func(t *testing.T) {
		name := uniq("delete")
		p := partition(t, st, name, "Default")
		push(t, st, p, "a", "b")
		deadLetter(t, st, p, g, "a", "x")
		_, err := st.Traces().RecordTrace(ctx, store.TraceParams{PartitionID: p, TransactionID: "a", EventType: "info", Data: []byte(`{}`), Names: []string{"n"}})
		require.NoError(t, err)
		require.NoError(t, st.Messages().DeleteMessage(ctx, p, "a"))
		_, _, err = st.Messages().GetMessage(ctx, p, "a")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM dead_letters WHERE partition_id = $1`, p))
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM message_traces WHERE partition_id = $1`, p))
		require.Equal(t, int64(1), scalar[int64](t, st, `SELECT message_count FROM partitions WHERE id = $1`, p))
		require.ErrorIs(t, st.Messages().DeleteMessage(ctx, p, "a"), store.ErrNotFound)
		_, _, err = st.Messages().GetMessage(ctx, p, "b")
		require.NoError(t, err)
	})
}
