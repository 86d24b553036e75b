package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestDLQ covers queries/dlq.sql: listing, reading, deleting and retrying dead letters.
func TestDLQ(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	t.Run("DeadLetterCountByQueue", func(t *testing.T) {
		a, b := uniq("count-a"), uniq("count-b")
		pa, pb := partition(t, st, a, "Default"), partition(t, st, b, "Default")
		push(t, st, pa, "1", "2")
		push(t, st, pb, "1")
		deadLetter(t, st, pa, "g1", "1", "x")
		deadLetter(t, st, pa, "g2", "1", "x")
		deadLetter(t, st, pa, "g1", "2", "x")
		got, err := st.DeadLetters().DLQByQueue(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), got[a])
		require.NotContains(t, got, b, "a queue without dead letters has no entry")
	})

	t.Run("DeadLetterList+DeadLetterCount", func(t *testing.T) {
		name := uniq("list")
		pa, pb := partition(t, st, name, "a"), partition(t, st, name, "b")
		trace := uuid.Must(uuid.NewV7())
		_, err := st.Push(ctx, []store.PushRow{{PartitionID: pa, TransactionID: "a1", ID: uuid.Must(uuid.NewV7()), TraceID: &trace, Payload: []byte(`{"v":1}`)}})
		require.NoError(t, err)
		push(t, st, pa, "a2")
		push(t, st, pb, "b1")
		deadLetter(t, st, pa, "g1", "a1", "e1")
		deadLetter(t, st, pa, "g1", "a2", "e2")
		deadLetter(t, st, pb, "g2", "b1", "e3")
		exec(t, st, `UPDATE dead_letters SET failed_at = now() - interval '2 hours' WHERE transaction_id = 'a1' AND partition_id = $1`, pa)
		list := func(f store.DLQFilter) ([]string, int64) {
			t.Helper()
			if f.Limit == 0 {
				f.Limit = 10
			}
			rows, total, err := st.DeadLetters().ListDeadLetters(ctx, f)
			require.NoError(t, err)
			out := make([]string, len(rows))
			for i, r := range rows {
				out[i] = r.TransactionID
			}
			return out, total
		}
		for _, c := range []struct {
			f     store.DLQFilter
			want  []string
			total int64
		}{
			{store.DLQFilter{Queue: name}, []string{"b1", "a2", "a1"}, 3}, // newest failure first
			{store.DLQFilter{Queue: name, Group: "g1"}, []string{"a2", "a1"}, 2},
			{store.DLQFilter{Queue: name, Partition: "b"}, []string{"b1"}, 1},
			{store.DLQFilter{Queue: name, From: time.Now().Add(-time.Hour)}, []string{"b1", "a2"}, 2},
			{store.DLQFilter{Queue: name, To: time.Now().Add(-time.Hour)}, []string{"a1"}, 1},
			{store.DLQFilter{Queue: name, Limit: 1, Offset: 1}, []string{"a2"}, 3}, // the total ignores the page
			{store.DLQFilter{Queue: uniq("none")}, []string{}, 0},
		} {
			got, total := list(c.f)
			require.Equal(t, c.want, got, "%+v", c.f)
			require.Equal(t, c.total, total, "%+v", c.f)
		}
		rows, _, err := st.DeadLetters().ListDeadLetters(ctx, store.DLQFilter{Queue: name, Partition: "a", To: time.Now().Add(-time.Hour), Limit: 1})
		require.NoError(t, err)
		r := rows[0]
		require.Equal(t, []any{name, "a", "g1", "e1", int32(1), pa, &trace}, []any{r.Queue, r.Partition, r.Group, *r.Error, r.RetryCount, r.PartitionID, r.TraceID})
		require.JSONEq(t, `{"v":1}`, string(r.Payload))
		require.True(t, r.FailedAt.Before(time.Now().Add(-time.Hour)))
	})

	t.Run("DeadLetterGet+DeadLetterDelete", func(t *testing.T) {
		name := uniq("get")
		p := partition(t, st, name, "Default")
		push(t, st, p, "m", "other")
		deadLetter(t, st, p, "g1", "m", "e1")
		deadLetter(t, st, p, "g2", "m", "e2")
		deadLetter(t, st, p, "g1", "other", "e3")
		get := func(group string) []string {
			t.Helper()
			rows, err := st.DeadLetters().GetDeadLetters(ctx, p, "m", group)
			require.NoError(t, err)
			var out []string
			for _, r := range rows {
				require.Equal(t, name, r.Queue)
				out = append(out, r.Group)
			}
			return out
		}
		require.ElementsMatch(t, []string{"g1", "g2"}, get(""))
		require.Equal(t, []string{"g2"}, get("g2"))
		n, err := st.DeadLetters().DeleteDeadLetters(ctx, p, "m", "g1")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.Equal(t, []string{"g2"}, get(""))
		n, err = st.DeadLetters().DeleteDeadLetters(ctx, p, "m", "")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.Empty(t, get(""))
		n, err = st.DeadLetters().DeleteDeadLetters(ctx, p, "m", "")
		require.NoError(t, err)
		require.Zero(t, n)
		rows, err := st.DeadLetters().GetDeadLetters(ctx, p, "other", "")
		require.NoError(t, err)
		require.Len(t, rows, 1, "another message's dead letter stays")
	})

	t.Run("DeadLetterRetry", func(t *testing.T) {
		name := uniq("retry")
		p := partition(t, st, name, "Default")
		push(t, st, p, "m")
		for _, g := range []string{"g1", "g2"} {
			ok, err := st.Groups().EnsureSubscription(ctx, name, g, store.SubscribeAll, time.Time{})
			require.NoError(t, err)
			require.True(t, ok)
			ackDone(t, st, p, g, "m")
		}
		deadLetter(t, st, p, "g1", "m", "e1")
		deadLetter(t, st, p, "g2", "m", "e2")
		require.Equal(t, []string{store.QueueMode}, pending(t, st, p), "g1 and g2 are done with the partition")
		n, err := st.DeadLetters().RetryDeadLetters(ctx, p, "m", "g1")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		// Served again to g1 only: a redelivery and a pending-work record for g1.
		require.Equal(t, []string{store.QueueMode, "g1"}, pending(t, st, p))
		require.Equal(t, "g1", scalar[string](t, st, `SELECT consumer_group FROM redeliveries WHERE partition_id = $1`, p))
		got, _ := pop(t, st, name, "g1", "", 10)
		require.Equal(t, []string{"m"}, txids(got))
		got, _ = pop(t, st, name, "g2", "", 10)
		require.Empty(t, got)
		n, err = st.DeadLetters().RetryDeadLetters(ctx, p, "m", "g1")
		require.NoError(t, err)
		require.Zero(t, n, "already retried")
		n, err = st.DeadLetters().RetryDeadLetters(ctx, p, "m", "")
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "every group left: g2")
	})
}
