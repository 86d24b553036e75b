package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestTraces covers queries/traces.sql: trace events on messages and their names. The name listings
// cover the whole schema, so this test has one of its own.
func TestTraces(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()
	name := uniq("traces")
	p := partition(t, st, name, "Default")
	push(t, st, p, "m1", "m2")

	record := func(t *testing.T, tx, event string, names ...string) uuid.UUID {
		t.Helper()
		id, err := st.Traces().RecordTrace(ctx, store.TraceParams{PartitionID: p, TransactionID: tx, EventType: event,
			Data: []byte(`{"e":"` + event + `"}`), ConsumerGroup: "g", WorkerID: "w", Names: names})
		require.NoError(t, err)
		return id
	}

	t.Run("TraceInsert+TraceNamesInsert+TraceListByMessage", func(t *testing.T) {
		a := record(t, "m1", "info", "order-1", "order-1", "", "batch") // repeated and empty names are dropped
		b, err := st.Traces().RecordTrace(ctx, store.TraceParams{PartitionID: p, TransactionID: "m1", EventType: "error", Data: []byte(`{}`)})
		require.NoError(t, err)
		_, err = st.Traces().RecordTrace(ctx, store.TraceParams{PartitionID: p, TransactionID: "none", EventType: "info", Data: []byte(`{}`), Names: []string{"x"}})
		require.ErrorIs(t, err, store.ErrNotFound)
		got, err := st.Traces().MessageTraces(ctx, p, "m1")
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, []uuid.UUID{a, b}, []uuid.UUID{got[0].ID, got[1].ID}, "oldest first")
		x := got[0]
		require.Equal(t, []string{"batch", "order-1"}, x.Names)
		require.Equal(t, []any{"info", "g", "w", p, "m1"}, []any{x.EventType, *x.ConsumerGroup, *x.WorkerID, x.PartitionID, x.TransactionID})
		require.JSONEq(t, `{"e":"info"}`, string(x.Data))
		require.Empty(t, got[1].Names)
		require.Nil(t, got[1].ConsumerGroup)
		got, err = st.Traces().MessageTraces(ctx, p, "m2")
		require.NoError(t, err)
		require.Empty(t, got)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM message_trace_names WHERE trace_name = 'x'`), "nothing of the failed trace")
	})

	t.Run("TraceListByName+TraceCountByName", func(t *testing.T) {
		first := record(t, "m1", "one", "byname")
		second := record(t, "m2", "two", "byname", "other")
		exec(t, st, `UPDATE message_traces SET created_at = created_at - interval '1 minute' WHERE id = $1`, first)
		got, total, err := st.Traces().TracesByName(ctx, "byname", 10, 0)
		require.NoError(t, err)
		require.Equal(t, int64(2), total)
		require.Equal(t, []uuid.UUID{second, first}, []uuid.UUID{got[0].ID, got[1].ID}, "newest first")
		x := got[0]
		require.Equal(t, []any{"m2", p, name, "Default", []string{"byname", "other"}}, []any{x.TransactionID, x.PartitionID, x.Queue, x.Partition, x.Names})
		require.JSONEq(t, `{"tx":"m2"}`, string(x.Payload))
		got, total, err = st.Traces().TracesByName(ctx, "byname", 1, 1)
		require.NoError(t, err)
		require.Equal(t, int64(2), total, "the total ignores the page")
		require.Equal(t, []uuid.UUID{first}, []uuid.UUID{got[0].ID})
		got, total, err = st.Traces().TracesByName(ctx, "nobody", 10, 0)
		require.NoError(t, err)
		require.Empty(t, got)
		require.Zero(t, total)
	})

	t.Run("TraceNameList+TraceNameCount", func(t *testing.T) {
		// Names so far: order-1, batch (one trace of m1), byname (m1, m2), other (m2).
		latest := record(t, "m2", "late", "newest")
		exec(t, st, `UPDATE message_traces SET created_at = now() + interval '1 minute' WHERE id = $1`, latest)
		got, total, err := st.Traces().TraceNames(ctx, 10, 0)
		require.NoError(t, err)
		require.Equal(t, int64(5), total)
		require.Len(t, got, 5)
		require.Equal(t, "newest", got[0].Name, "most recently used first")
		for _, n := range got {
			if n.Name == "byname" {
				require.Equal(t, []int64{2, 2}, []int64{n.Traces, n.Messages})
				require.WithinDuration(t, time.Now(), n.LastSeen, time.Minute)
			}
		}
		page, total, err := st.Traces().TraceNames(ctx, 2, 1)
		require.NoError(t, err)
		require.Equal(t, int64(5), total)
		require.Equal(t, []string{got[1].Name, got[2].Name}, []string{page[0].Name, page[1].Name})
	})
}

// TestTraceInsertRacingQueueDelete: traces have no foreign key to their message (0015); a trace being
// recorded while its queue is deleted either is stored first and deleted with the queue, or finds no
// message. Here the trace's transaction holds its message when the delete starts: the delete waits for
// it and then takes the trace along.
func TestTraceInsertRacingQueueDelete(t *testing.T) {
	t.Parallel()
	st := schemaStore(t)
	ctx := t.Context()
	pool := store.PoolOf(st)
	name := uniq("trace-race")
	p := partition(t, st, name, "Default")
	push(t, st, p, "m")

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	var id uuid.UUID
	require.NoError(t, tx.QueryRow(ctx, store.Queries["TraceInsert"], uuid.Must(uuid.NewV7()), p, "m", "info", []byte(`{}`), nil, nil).Scan(&id))
	var pid int32
	require.NoError(t, tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))

	deleted := make(chan error, 1)
	go func() {
		_, err := st.Queues().DeleteQueue(ctx, name)
		deleted <- err
	}()
	// The delete is blocked by the trace's transaction (and by nothing else).
	require.Eventually(t, func() bool {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`, pid).Scan(&n)
		return err == nil && n == 1
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-deleted)
	require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM message_traces WHERE id = $1`, id))
	require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM messages WHERE partition_id = $1`, p))
}
