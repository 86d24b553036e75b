package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestPush covers queries/push.sql.
func TestPush(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)

	// seqs reads the transaction ids of partition pid in sequence order, with their sequence numbers.
	seqs := func(t *testing.T, pid uuid.UUID) map[string]int64 {
		rows, err := store.PoolOf(st).Query(t.Context(), `SELECT transaction_id, seq FROM messages WHERE partition_id = $1`, pid)
		require.NoError(t, err)
		out := map[string]int64{}
		for rows.Next() {
			var tx string
			var seq int64
			require.NoError(t, rows.Scan(&tx, &seq))
			out[tx] = seq
		}
		require.NoError(t, rows.Err())
		return out
	}

	t.Run("PartitionBump+MessageInsert", func(t *testing.T) {
		q := uniq("push")
		pa, pb := partition(t, st, q, "a"), partition(t, st, q, "b")
		row := func(p uuid.UUID, tx string) store.PushRow {
			return store.PushRow{PartitionID: p, TransactionID: tx, ID: uuid.Must(uuid.NewV7()), Payload: []byte(`{}`)}
		}
		// Numbered per partition in slice order; a transactionId repeated inside the batch keeps its first row.
		out, err := st.Push(t.Context(), []store.PushRow{row(pa, "x"), row(pb, "x"), row(pa, "y"), row(pa, "x"), row(pb, "z")})
		require.NoError(t, err)
		require.Equal(t, []bool{true, true, true, false, true}, []bool{out[0].Inserted, out[1].Inserted, out[2].Inserted, out[3].Inserted, out[4].Inserted})
		require.Equal(t, store.PushOutcome{ExistingID: scalar[uuid.UUID](t, st, `SELECT id FROM messages WHERE partition_id = $1 AND transaction_id = 'x'`, pa)}, out[3],
			"a repeat inside the push names the row stored for the first")
		require.Equal(t, map[string]int64{"x": 1, "y": 2}, seqs(t, pa))
		require.Equal(t, map[string]int64{"x": 1, "z": 2}, seqs(t, pb))
		// A later push continues after last_seq; a stored transactionId is not inserted again (the
		// first attempt fails on the unique index, the second looks it up).
		y := scalar[uuid.UUID](t, st, `SELECT id FROM messages WHERE partition_id = $1 AND transaction_id = 'y'`, pa)
		out, err = st.Push(t.Context(), []store.PushRow{row(pa, "y"), row(pa, "w")})
		require.NoError(t, err)
		require.Equal(t, store.PushOutcome{ExistingID: y}, out[0])
		require.True(t, out[1].Inserted)
		// The dropped duplicate leaves a gap in the numbering (the backlog is an upper bound for that).
		require.Equal(t, int64(4), seqs(t, pa)["w"])
		require.Equal(t, int64(4), scalar[int64](t, st, `SELECT last_seq FROM partitions WHERE id = $1`, pa))
		require.Equal(t, int64(3), scalar[int64](t, st, `SELECT message_count FROM partitions WHERE id = $1`, pa))
		require.NotNil(t, scalar[*time.Time](t, st, `SELECT last_push_at FROM partitions WHERE id = $1`, pa))
		// Work is recorded for the queue-mode group and for every group subscribed to the queue.
		_, err = st.Groups().EnsureSubscription(t.Context(), q, "sub", store.SubscribeAll, time.Time{})
		require.NoError(t, err)
		pc := partition(t, st, q, "c")
		push(t, st, pc, "1")
		require.Equal(t, []string{store.QueueMode, "sub"}, pending(t, st, pc))
	})

	t.Run("PartitionBump/a push of stored ids only", func(t *testing.T) {
		// Every row a duplicate: the partition is not bumped and gets no pending-work row.
		q := uniq("push-all-dup")
		p := partition(t, st, q, "Default")
		first := push(t, st, p, "a", "b")
		require.NoError(t, store.PoolOf(st).QueryRow(t.Context(), `DELETE FROM pending_partitions WHERE partition_id = $1 RETURNING 1`, p).Scan(new(int)))
		at := scalar[time.Time](t, st, `SELECT last_push_at FROM partitions WHERE id = $1`, p)
		out, err := st.Push(t.Context(), []store.PushRow{
			{PartitionID: p, TransactionID: "b", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`)},
			{PartitionID: p, TransactionID: "a", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`2`)},
		})
		require.NoError(t, err)
		require.Equal(t, []store.PushOutcome{{ExistingID: first[1]}, {ExistingID: first[0]}}, out)
		require.Equal(t, int64(2), scalar[int64](t, st, `SELECT last_seq FROM partitions WHERE id = $1`, p))
		require.Equal(t, int64(2), scalar[int64](t, st, `SELECT message_count FROM partitions WHERE id = $1`, p))
		require.Equal(t, at, scalar[time.Time](t, st, `SELECT last_push_at FROM partitions WHERE id = $1`, p))
		require.Empty(t, pending(t, st, p))
	})

	t.Run("PartitionBump/a stored id ends the push", func(t *testing.T) {
		// last_seq is the last stored seq, so a duplicate at the end leaves no gap after it.
		q := uniq("push-dup-last")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a")
		tx, err := st.Begin(t.Context())
		require.NoError(t, err)
		out, err := tx.Push(t.Context(), []store.PushRow{
			{PartitionID: p, TransactionID: "b", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`)},
			{PartitionID: p, TransactionID: "a", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`2`)},
		})
		require.NoError(t, err)
		require.NoError(t, tx.Commit(t.Context()))
		require.True(t, out[0].Inserted)
		require.False(t, out[1].Inserted)
		require.Equal(t, map[string]int64{"a": 1, "b": 2}, seqs(t, p))
		require.Equal(t, int64(2), scalar[int64](t, st, `SELECT last_seq FROM partitions WHERE id = $1`, p))
	})

	// The rows of a small push go inline with the bump and the commit (MessageInsert), the others by
	// COPY, which the broker encodes itself: either way every column arrives as pushed, numbered after
	// what the partition holds, and created_at is the partition's bump clock.
	everyColumn := func(inline int) func(t *testing.T) {
		return func(t *testing.T) {
			st := openStore(t, testenv.SharedDatabase(t, "store"), "")
			store.SetInlineRows(st, inline)
			q := uniq("push-cols")
			p := partition(t, st, q, "Default")
			push(t, st, p, "before")
			trace, sub := uuid.New(), "producer ü"
			rows := []store.PushRow{
				{PartitionID: p, TransactionID: "tx-ü", ID: uuid.Must(uuid.NewV7()), TraceID: &trace, Payload: []byte(`{"a":[1,"é",null],"b":true}`), ProducerSub: &sub, Encrypted: true},
				{PartitionID: p, TransactionID: "plain", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`"x"`), Minted: true},
			}
			out, err := st.Push(t.Context(), rows)
			require.NoError(t, err)
			require.True(t, out[0].Inserted && out[1].Inserted)
			type stored struct {
				seq             int64
				id              uuid.UUID
				txid, payload   string
				trace           *uuid.UUID
				sub             *string
				enc, atLastPush bool
			}
			r, err := store.PoolOf(st).Query(t.Context(), `SELECT m.seq, m.id, m.transaction_id, m.payload::text, m.trace_id, m.producer_sub, m.is_encrypted, m.created_at = p.last_push_at
				FROM messages m JOIN partitions p ON p.id = m.partition_id WHERE m.partition_id = $1 AND m.seq > 1 ORDER BY m.seq`, p)
			require.NoError(t, err)
			var got []stored
			for r.Next() {
				var s stored
				require.NoError(t, r.Scan(&s.seq, &s.id, &s.txid, &s.payload, &s.trace, &s.sub, &s.enc, &s.atLastPush))
				got = append(got, s)
			}
			require.NoError(t, r.Err())
			require.Equal(t, []stored{
				{2, rows[0].ID, "tx-ü", `{"a": [1, "é", null], "b": true}`, &trace, &sub, true, true},
				{3, rows[1].ID, "plain", `"x"`, nil, nil, false, true},
			}, got)
		}
	}
	t.Run("MessageInsert/every column", everyColumn(64))
	t.Run("MessageCopy/every column", everyColumn(0))

	t.Run("PartitionBump/delayed processing", func(t *testing.T) {
		q := uniq("push-delayed")
		configure(t, st, q, store.QueueOptions{DelayedProcessing: 3600})
		p := partition(t, st, q, "Default")
		push(t, st, p, "1")
		require.True(t, scalar[bool](t, st, `SELECT ready_at > now() + interval '59 minutes' FROM pending_partitions WHERE partition_id = $1`, p))
	})

	t.Run("PushPlanSettings", func(t *testing.T) {
		// A push inside a caller's transaction plans without sequential scans and hands the
		// transaction back with the server's setting, so the caller's own statements plan as usual.
		q := uniq("push-tx")
		p := partition(t, st, q, "a")
		tx, err := st.Begin(t.Context())
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(context.WithoutCancel(t.Context())) }()
		out, err := tx.Push(t.Context(), []store.PushRow{{PartitionID: p, TransactionID: "t1", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`{}`)}})
		require.NoError(t, err)
		require.True(t, out[0].Inserted)
		require.Equal(t, "on", store.TxSetting(t, tx, "enable_seqscan"))
		require.NoError(t, tx.Commit(t.Context()))
		require.Equal(t, map[string]int64{"t1": 1}, seqs(t, p))
	})

	t.Run("MessageExistingIDs", func(t *testing.T) {
		q := uniq("push-dup")
		p := partition(t, st, q, "Default")
		first := push(t, st, p, "a", "b")
		rows := []store.PushRow{
			{PartitionID: p, TransactionID: "b", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`)},
			{PartitionID: p, TransactionID: "c", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`2`)},
			{PartitionID: p, TransactionID: "a", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`3`)},
		}
		tx, err := st.Begin(t.Context())
		require.NoError(t, err)
		out, err := tx.Push(t.Context(), rows)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(t.Context()))
		require.Equal(t, []store.PushOutcome{{ExistingID: first[1]}, {Inserted: true}, {ExistingID: first[0]}}, out)
	})

	t.Run("PartitionLock", func(t *testing.T) {
		// A push holds its partitions until it commits, so a concurrent push to them numbers its rows after.
		q := uniq("push-lock")
		p := partition(t, st, q, "Default")
		tx, err := st.Begin(t.Context())
		require.NoError(t, err)
		_, err = tx.Push(t.Context(), []store.PushRow{{PartitionID: p, TransactionID: "first", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`)}})
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Go(func() { push(t, st, p, "second") })
		require.Eventually(t, func() bool {
			return scalar[bool](t, st, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
				AND query LIKE 'SELECT id FROM partitions WHERE id = ANY%')`)
		}, 10*time.Second, 5*time.Millisecond, "the second push never waited for the first")
		require.NoError(t, tx.Commit(t.Context()))
		wg.Wait()
		require.Equal(t, map[string]int64{"first": 1, "second": 2}, seqs(t, p))
	})

	t.Run("QueueNotify", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		connected := make(chan struct{}, 1)
		got := make(chan string, 10)
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = st.Listen(ctx, st.PushChannel(), func() { connected <- struct{}{} }, func(p string) { got <- p })
		})
		defer func() { cancel(); wg.Wait() }()
		<-connected
		// Each distinct payload is sent once.
		require.NoError(t, st.Notify(t.Context(), []string{"q1", "q2", "q1"}))
		var seen []string
		for range 2 {
			seen = append(seen, <-got)
		}
		slices.Sort(seen)
		require.Equal(t, []string{"q1", "q2"}, seen)
		require.NoError(t, st.Notify(t.Context(), []string{"q3"}))
		require.Equal(t, "q3", <-got, "a repeated payload was sent twice")
	})
}
