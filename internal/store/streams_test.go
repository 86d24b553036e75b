package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestStreams covers queries/streams.sql: the stream query registry and the per-shard state a cycle
// reads and writes.
func TestStreams(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	// inTx runs fn in an explicit transaction and commits it.
	inTx := func(t *testing.T, fn func(tx *store.Tx) error) error {
		t.Helper()
		tx, err := st.Begin(ctx)
		require.NoError(t, err)
		if err := fn(tx); err != nil {
			require.NoError(t, tx.Rollback(context.WithoutCancel(ctx)))
			return err
		}
		return tx.Commit(ctx)
	}
	register := func(t *testing.T, q store.StreamQuery) store.StreamRegistration {
		t.Helper()
		r, err := st.Streams().RegisterStreamQuery(ctx, q)
		require.NoError(t, err)
		return r
	}
	stored := func(t *testing.T, id uuid.UUID) []string {
		var src, hash string
		var sink *string
		require.NoError(t, store.PoolOf(st).QueryRow(ctx, `SELECT source_queue, sink_queue, config_hash FROM queen_streams.queries WHERE id = $1`, id).Scan(&src, &sink, &hash))
		s := ""
		if sink != nil {
			s = *sink
		}
		return []string{src, s, hash}
	}

	t.Run("StreamsLockQueryName+StreamsQueryByName+StreamsInsertQuery+StreamsUpdateQuery+StreamsWipeState", func(t *testing.T) {
		name := uniq("query")
		r := register(t, store.StreamQuery{Name: name, SourceQueue: "src", ConfigHash: "h1"})
		require.True(t, r.Fresh)
		require.Equal(t, []string{"src", "", "h1"}, stored(t, r.ID), "no sink is NULL")
		p := uuid.Must(uuid.NewV7())
		require.NoError(t, inTx(t, func(tx *store.Tx) error {
			return tx.ApplyStateOps(ctx, r.ID, p, []store.StateOp{{Key: "k", Value: json.RawMessage(`1`)}})
		}))
		// Same hash: an update of the queues, the state stays.
		again := register(t, store.StreamQuery{Name: name, SourceQueue: "src2", SinkQueue: "sink", ConfigHash: "h1"})
		require.Equal(t, store.StreamRegistration{ID: r.ID}, again)
		require.Equal(t, []string{"src2", "sink", "h1"}, stored(t, r.ID))
		// Another hash without reset: refused, nothing changes.
		mis := register(t, store.StreamQuery{Name: name, SourceQueue: "x", ConfigHash: "h2"})
		require.Equal(t, store.StreamRegistration{ID: r.ID, Mismatch: true}, mis)
		require.Equal(t, []string{"src2", "sink", "h1"}, stored(t, r.ID))
		rows, err := st.Streams().StreamState(ctx, store.StateFilter{QueryID: r.ID, PartitionID: p})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		// With reset: accepted, and the query's state is wiped.
		reset := register(t, store.StreamQuery{Name: name, SourceQueue: "x", ConfigHash: "h2", Reset: true})
		require.Equal(t, store.StreamRegistration{ID: r.ID, Reset: true}, reset)
		require.Equal(t, []string{"x", "", "h2"}, stored(t, r.ID))
		rows, err = st.Streams().StreamState(ctx, store.StateFilter{QueryID: r.ID, PartitionID: p})
		require.NoError(t, err)
		require.Empty(t, rows)
		// Concurrent first registrations of one name: one inserts, the others find it.
		name2 := uniq("query")
		var wg sync.WaitGroup
		regs := make([]store.StreamRegistration, 4)
		for i := range regs {
			wg.Go(func() {
				r, err := st.Streams().RegisterStreamQuery(ctx, store.StreamQuery{Name: name2, SourceQueue: "s", ConfigHash: "h"})
				if err == nil {
					regs[i] = r
				}
			})
		}
		wg.Wait()
		fresh := 0
		for _, r := range regs {
			require.NotEqual(t, uuid.Nil, r.ID)
			require.Equal(t, regs[0].ID, r.ID)
			if r.Fresh {
				fresh++
			}
		}
		require.Equal(t, 1, fresh)
	})

	t.Run("StreamsUpsertState+StreamsDeleteState+StreamsStateVersions+StreamsGetState", func(t *testing.T) {
		r := register(t, store.StreamQuery{Name: uniq("state"), SourceQueue: "src", ConfigHash: "h"})
		p, other := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		ops := []store.StateOp{
			{Key: "win:1", Value: json.RawMessage(`{"windowEnd": 100}`)},
			{Key: "win:2", Value: json.RawMessage(`{"windowEnd": 200}`)},
			{Key: "win:3", Value: json.RawMessage(`{"windowEnd": "later"}`)},
			{Key: "total", Value: json.RawMessage(`1`)},
			{Key: "gone", Value: json.RawMessage(`0`)},
			{Key: "total", Value: json.RawMessage(`2`)}, // in order: the last write wins
			{Key: "gone", Delete: true},
		}
		require.NoError(t, inTx(t, func(tx *store.Tx) error { return tx.ApplyStateOps(ctx, r.ID, p, ops) }))
		require.NoError(t, inTx(t, func(tx *store.Tx) error {
			return tx.ApplyStateOps(ctx, r.ID, other, []store.StateOp{{Key: "total", Value: json.RawMessage(`9`)}})
		}))
		keys := func(f store.StateFilter) []string {
			t.Helper()
			f.QueryID, f.PartitionID = r.ID, p
			rows, err := st.Streams().StreamState(ctx, f)
			require.NoError(t, err)
			out := []string{}
			for _, x := range rows {
				out = append(out, x.Key+"="+string(x.Value))
			}
			return out
		}
		ripe := 150.0
		for _, c := range []struct {
			f    store.StateFilter
			want []string
		}{
			{store.StateFilter{}, []string{"total=2", `win:1={"windowEnd": 100}`, `win:2={"windowEnd": 200}`, `win:3={"windowEnd": "later"}`}},
			{store.StateFilter{Keys: []string{"total", "gone", "nope"}}, []string{"total=2"}},
			{store.StateFilter{KeyPrefix: "win:"}, []string{`win:1={"windowEnd": 100}`, `win:2={"windowEnd": 200}`, `win:3={"windowEnd": "later"}`}},
			{store.StateFilter{RipeAtOrBefore: &ripe}, []string{`win:1={"windowEnd": 100}`}},
			{store.StateFilter{KeyPrefix: "total", Keys: []string{"win:1"}}, []string{}},
		} {
			require.Equal(t, c.want, keys(c.f), "%+v", c.f)
		}

		// Checked ops: the row must be as the writer read it.
		rows, err := st.Streams().StreamState(ctx, store.StateFilter{QueryID: r.ID, PartitionID: p, Keys: []string{"total"}})
		require.NoError(t, err)
		at := rows[0].UpdatedAt
		for _, c := range []struct {
			name string
			op   store.StateOp
			ok   bool
		}{
			{"absent as expected", store.StateOp{Key: "new", Value: json.RawMessage(`1`), Check: true, ExpectAbsent: true}, true},
			{"present, expected absent", store.StateOp{Key: "total", Value: json.RawMessage(`3`), Check: true, ExpectAbsent: true}, false},
			{"absent, expected present", store.StateOp{Key: "gone", Value: json.RawMessage(`1`), Check: true, ExpectUpdatedAt: at}, false},
			{"stale version", store.StateOp{Key: "total", Value: json.RawMessage(`3`), Check: true, ExpectUpdatedAt: at.Add(-time.Second)}, false},
			{"current version", store.StateOp{Key: "total", Value: json.RawMessage(`3`), Check: true, ExpectUpdatedAt: at}, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				err := inTx(t, func(tx *store.Tx) error { return tx.ApplyStateOps(ctx, r.ID, p, []store.StateOp{c.op}) })
				if c.ok {
					require.NoError(t, err)
					return
				}
				var conflict *store.StateConflictError
				require.ErrorAs(t, err, &conflict)
				require.Equal(t, c.op.Key, conflict.Key)
			})
		}
		require.Equal(t, []string{"new=1", "total=3"}, keys(store.StateFilter{Keys: []string{"new", "total"}}))
	})

	t.Run("MustExist", func(t *testing.T) {
		r := register(t, store.StreamQuery{Name: uniq("exist"), SourceQueue: "src", ConfigHash: "h"})
		p := uuid.Must(uuid.NewV7())
		put := store.StateOp{Key: "w", Value: json.RawMessage(`{}`)}
		del := store.StateOp{Key: "w", Delete: true, MustExist: true}
		require.NoError(t, inTx(t, func(tx *store.Tx) error { return tx.ApplyStateOps(ctx, r.ID, p, []store.StateOp{put, del}) }),
			"a row written earlier in the same cycle exists")
		var conflict *store.StateConflictError
		require.ErrorAs(t, inTx(t, func(tx *store.Tx) error { return tx.ApplyStateOps(ctx, r.ID, p, []store.StateOp{del}) }), &conflict)
		require.Equal(t, "w", conflict.Key)
		require.NoError(t, inTx(t, func(tx *store.Tx) error {
			return tx.ApplyStateOps(ctx, r.ID, p, []store.StateOp{{Key: "w", Delete: true}})
		}), "without MustExist a missing row is fine")
	})

	t.Run("StreamsRecordCycle+StreamsForgetCycles", func(t *testing.T) {
		r := register(t, store.StreamQuery{Name: uniq("cycles"), SourceQueue: "src", ConfigHash: "h"})
		p, other := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		record := func(pid uuid.UUID, id string, keep time.Duration) bool {
			t.Helper()
			var fresh bool
			require.NoError(t, inTx(t, func(tx *store.Tx) error {
				var err error
				fresh, err = tx.RecordStreamCycle(ctx, r.ID, pid, id, keep)
				return err
			}))
			return fresh
		}
		require.True(t, record(p, "c1", time.Hour))
		require.False(t, record(p, "c1", time.Hour), "a committed id is a repeat")
		require.True(t, record(other, "c1", time.Hour), "ids are per shard")
		// A rolled-back cycle leaves no id behind.
		tx, err := st.Begin(ctx)
		require.NoError(t, err)
		fresh, err := tx.RecordStreamCycle(ctx, r.ID, p, "c2", time.Hour)
		require.NoError(t, err)
		require.True(t, fresh)
		require.NoError(t, tx.Rollback(ctx))
		require.True(t, record(p, "c2", time.Hour))
		// An expired id is taken over by its next record; a fresh record forgets the shard's expired
		// ids, and only the shard's.
		exec(t, st, `UPDATE queen_streams.cycles SET expires_at = now() - interval '1 second' WHERE query_id = $1 AND cycle_id = 'c1'`, r.ID)
		require.True(t, record(p, "c1", time.Hour), "expired")
		exec(t, st, `UPDATE queen_streams.cycles SET expires_at = now() - interval '1 second' WHERE query_id = $1`, r.ID)
		require.True(t, record(p, "c3", time.Hour))
		require.Equal(t, "c3", scalar[string](t, st, `SELECT string_agg(cycle_id, ',') FROM queen_streams.cycles WHERE query_id = $1 AND partition_id = $2`, r.ID, p))
		require.Equal(t, 1, scalar[int](t, st, `SELECT count(*)::int FROM queen_streams.cycles WHERE query_id = $1 AND partition_id = $2`, r.ID, other))
	})

	t.Run("StreamsSourceLeased", func(t *testing.T) {
		q, g := uniq("leased"), "streams.x"
		p := partition(t, st, q, "Default")
		leased := func() bool {
			t.Helper()
			var live bool
			require.NoError(t, inTx(t, func(tx *store.Tx) error {
				var err error
				live, err = tx.StreamSourceLeased(ctx, p, g)
				return err
			}))
			return live
		}
		require.False(t, leased(), "never popped by the group")
		push(t, st, p, "a", "b")
		ms, _ := pop(t, st, q, g, "Default", 1)
		require.Len(t, ms, 1)
		require.True(t, leased())
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1`, p)
		require.False(t, leased(), "expired")
		// The row stays locked until the transaction ends: a pop of the partition waits for it.
		tx, err := st.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.StreamSourceLeased(ctx, p, g)
		require.NoError(t, err)
		popped := make(chan int, 1)
		go func() {
			name := "Default"
			ms, err := st.Pop(ctx, store.PopParams{Queue: q, Group: g, Partition: &name, MaxPartitions: 1, Batch: 1, LeaseID: uuid.Must(uuid.NewV7())})
			if err != nil {
				popped <- -1
				return
			}
			popped <- len(ms)
		}()
		require.Eventually(t, func() bool {
			return scalar[bool](t, st, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity w JOIN pg_stat_activity b ON b.pid = ANY (pg_blocking_pids(w.pid))
				WHERE w.query LIKE 'WITH RECURSIVE q AS%' AND b.query LIKE 'SELECT coalesce(pc.lease_expires_at > coalesce($3::timestamptz, now()), false)%')`)
		}, 10*time.Second, 5*time.Millisecond, "the pop never waited for the locked consumer row")
		select {
		case <-popped:
			t.Fatal("a pop claimed the partition while the row was locked")
		default:
		}
		require.NoError(t, tx.Commit(ctx))
		require.Equal(t, 1, <-popped)
	})

	t.Run("StreamsLockShard+StreamsSourceQueue", func(t *testing.T) {
		name := uniq("source")
		p := partition(t, st, name, "Default")
		qid := uuid.Must(uuid.NewV7())
		tx, err := st.Begin(ctx)
		require.NoError(t, err)
		src, err := tx.StreamSourceQueue(ctx, p)
		require.NoError(t, err)
		require.Equal(t, name, src)
		src, err = tx.StreamSourceQueue(ctx, uuid.Must(uuid.NewV7()))
		require.NoError(t, err)
		require.Empty(t, src, "no such partition")
		require.NoError(t, tx.LockStreamShard(ctx, qid, p))
		// A second writer of the shard waits for the first to end.
		var wg sync.WaitGroup
		locked := make(chan struct{})
		wg.Go(func() {
			tx2, err := st.Begin(ctx)
			if err != nil {
				return
			}
			defer func() { _ = tx2.Rollback(context.WithoutCancel(ctx)) }()
			if tx2.LockStreamShard(ctx, qid, p) == nil {
				close(locked)
			}
		})
		require.Eventually(t, func() bool {
			return scalar[bool](t, st, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`)
		}, 10*time.Second, 5*time.Millisecond, "the second writer never waited")
		select {
		case <-locked:
			t.Fatal("two writers held one shard")
		default:
		}
		// Another shard is free meanwhile.
		require.NoError(t, inTx(t, func(tx *store.Tx) error { return tx.LockStreamShard(ctx, qid, uuid.Must(uuid.NewV7())) }))
		require.NoError(t, tx.Commit(ctx))
		<-locked
		wg.Wait()
	})
}
