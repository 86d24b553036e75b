package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestConn covers queries/conn.sql: the round-trip check, LISTEN and the transaction control the hot
// paths pipeline with their statements, and the two pools' session settings. The store has one
// connection per pool, so every statement after an operation runs on the connection that operation used.
func TestConn(t *testing.T) {
	t.Parallel()
	url := testenv.NewDatabase(t)
	// A session default that no hot path sets, so that a setting leaking out of a transaction shows.
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = local', current_database()); END $$`)
	require.NoError(t, err)
	require.NoError(t, conn.Close(t.Context()))
	st, err := store.Open(t.Context(), store.Options{URL: url, PoolSize: 1})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx := t.Context()

	// idleWith asserts that the one connection of pool is back outside any transaction, with the
	// session settings want (plan_cache_mode, synchronous_commit, enable_seqscan).
	idleWith := func(t *testing.T, pool *pgxpool.Pool, want []string) {
		t.Helper()
		c, err := pool.Acquire(ctx)
		require.NoError(t, err)
		defer c.Release()
		require.Equal(t, byte('I'), c.Conn().PgConn().TxStatus())
		var plan, sync, seqscan string
		require.NoError(t, c.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_setting('synchronous_commit'), current_setting('enable_seqscan')`).Scan(&plan, &sync, &seqscan))
		require.Equal(t, want, []string{plan, sync, seqscan})
	}
	// The general pool's connection has the session's own settings: the hot path's are transaction-local
	// there.
	idle := func(t *testing.T) { t.Helper(); idleWith(t, store.PoolOf(st), []string{"auto", "local", "on"}) }
	// The hot pool's connection keeps its own session settings (the plan settings) but the database's
	// synchronous_commit: Pop turns it off for its own transaction only.
	hotIdle := func(t *testing.T) {
		t.Helper()
		idleWith(t, store.HotPoolOf(st), []string{"force_generic_plan", "local", "off"})
	}

	t.Run("Ping", func(t *testing.T) {
		require.NoError(t, st.Ping(ctx))
	})

	// A read URL that names the primary itself is no standby: its probe says so (ReplicaPrimaryLSN read
	// the primary's position, ReplicaReplayLSN found no recovery), and the reads stay on the primary.
	// test/faults TestReadReplica runs a real standby.
	t.Run("ReplicaPrimaryLSN+ReplicaReplayLSN", func(t *testing.T) {
		r, err := store.OpenReplica(ctx, st, store.Options{URL: url, PoolSize: 2}, time.Minute, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		require.Same(t, st, r.Reads(), "before the first probe")
		require.NoError(t, r.Start(ctx))
		defer r.Stop()
		require.Eventually(t, func() bool { return r.State().Status != store.ReplicaStarting }, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, store.ReplicaNotStandby, r.State().Status)
		require.Same(t, st, r.Reads())
	})

	t.Run("Begin+HotPathSettings+Commit", func(t *testing.T) {
		q := uniq("conn")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a", "b")
		idle(t)
		got, _ := pop(t, st, q, store.QueueMode, "", 10) // without autoAck: asynchronous commit
		require.Len(t, got, 2)
		idle(t)
		hotIdle(t)
		ackDone(t, st, p, store.QueueMode, "a", "b")
		idle(t)
		hotIdle(t)
		require.Equal(t, int64(2), scalar[int64](t, st, `SELECT cursor_seq FROM partition_consumers WHERE partition_id = $1`, p))
	})

	// The Pop statement sets its own transaction's commit mode: asynchronous unless autoAck.
	t.Run("PopCommitMode", func(t *testing.T) {
		q := uniq("conn-commit")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a")
		c, err := store.HotPoolOf(st).Acquire(ctx)
		require.NoError(t, err)
		defer c.Release()
		for _, autoAck := range []bool{false, true} {
			tx, err := c.Begin(ctx)
			require.NoError(t, err)
			rows, err := tx.Query(ctx, store.Queries["Pop"], q, store.QueueMode, nil, 1, 10, uuid.New(), autoAck, nil)
			require.NoError(t, err)
			rows.Close()
			require.NoError(t, rows.Err())
			var sync string
			require.NoError(t, tx.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&sync))
			require.Equal(t, map[bool]string{false: "off", true: "local"}[autoAck], sync, "autoAck %v", autoAck)
			require.NoError(t, tx.Rollback(ctx))
		}
	})

	t.Run("Rollback", func(t *testing.T) {
		q := uniq("conn-rollback")
		p := partition(t, st, q, "Default")
		// A push that fails (a payload that is not JSON) leaves nothing behind.
		_, err := st.Push(ctx, []store.PushRow{
			{PartitionID: p, TransactionID: "ok", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`1`)},
			{PartitionID: p, TransactionID: "bad", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`{`)},
		})
		require.Error(t, err)
		idle(t)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM messages WHERE partition_id = $1`, p))
		// An ack whose decision fails applies nothing, not even the consumer row it created.
		push(t, st, p, "a")
		boom := errors.New("boom")
		err = st.Ack(ctx, []store.AckTarget{{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: "g"}, TransactionID: "a"}},
			func(map[store.ConsumerKey]*store.ConsumerState, []store.ResolvedMessage) (store.AckEffects, error) {
				return store.AckEffects{}, boom
			})
		require.ErrorIs(t, err, boom)
		idle(t)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM partition_consumers WHERE partition_id = $1`, p))
	})

	t.Run("Listen", func(t *testing.T) {
		channel := uniq("chan")
		lctx, cancel := context.WithCancel(ctx)
		connected := make(chan struct{}, 1)
		got := make(chan string, 10)
		var wg sync.WaitGroup
		wg.Go(func() {
			require.NoError(t, st.Listen(lctx, channel, func() { connected <- struct{}{} }, func(p string) { got <- p }))
		})
		<-connected
		// Notifications of one session arrive in order: the one on another channel would come first.
		exec(t, st, `SELECT pg_notify($1, 'elsewhere')`, uniq("chan"))
		exec(t, st, `SELECT pg_notify($1, 'here')`, channel)
		require.Equal(t, "here", <-got)
		cancel()
		wg.Wait() // Listen returns once its context ends
	})
}

// TestTransactionPooling opens a store as it runs behind a pooler in transaction mode, here straight on
// PostgreSQL, where it looks the same: nothing the store relies on may be in the session. Migrations,
// a push, a pop, an ack, an explicit transaction and the jobs' statements work; inside the store's
// statements its settings hold (PoolTxSettings), and its sessions are left with the database's own
// settings and no named prepared statement.
func TestTransactionPooling(t *testing.T) {
	t.Parallel()
	url := testenv.NewDatabase(t)
	ctx := t.Context()
	st, err := store.Open(ctx, store.Options{URL: url, PoolSize: 2, PoolMode: store.PoolTransaction, StatementTimeout: 7 * time.Second})
	require.NoError(t, err)
	t.Cleanup(st.Close)

	t.Run("PoolTxSettings", func(t *testing.T) {
		q := uniq("txpool")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a", "b")
		got, _ := pop(t, st, q, store.QueueMode, "", 10)
		require.Equal(t, []string{"a", "b"}, txids(got))
		ackDone(t, st, p, store.QueueMode, "a", "b")
		tx, err := st.Begin(ctx)
		require.NoError(t, err)
		out, err := tx.Push(ctx, []store.PushRow{{PartitionID: p, TransactionID: "c", ID: uuid.Must(uuid.NewV7()), Payload: []byte(`{}`)}})
		require.NoError(t, err)
		require.True(t, out[0].Inserted)
		require.NoError(t, tx.Commit(ctx))
		_, err = st.Jobs().VacuumPending(ctx, 0)
		require.NoError(t, err)
		_, err = st.Jobs().AnalyzeOutgrown(ctx, 1, 1, 1e9)
		require.NoError(t, err)

		for _, hot := range []bool{false, true} {
			var path, timeout, seqscan string
			require.NoError(t, store.StatementsOf(st, hot).QueryRow(ctx,
				`SELECT current_setting('search_path'), current_setting('statement_timeout'), current_setting('enable_seqscan')`).Scan(&path, &timeout, &seqscan))
			require.Equal(t, []string{"queenmq", "7s", map[bool]string{false: "on", true: "off"}[hot]}, []string{path, timeout, seqscan})
		}
		for _, pool := range []*pgxpool.Pool{store.PoolOf(st), store.HotPoolOf(st)} {
			c, err := pool.Acquire(ctx)
			require.NoError(t, err)
			var path, timeout string
			var prepared int
			require.NoError(t, c.QueryRow(ctx, `SELECT current_setting('search_path'), current_setting('statement_timeout'), (SELECT count(*) FROM pg_prepared_statements)`).Scan(&path, &timeout, &prepared))
			c.Release()
			require.Equal(t, []string{`"$user", public`, "0"}, []string{path, timeout})
			require.Zero(t, prepared)
		}
	})

	// A statement's transaction commits once its rows are read to the end, whether or not the caller
	// closes them (pgx callers commonly do not): a connection released inside it would be discarded
	// and the statement rolled back.
	t.Run("RowsReadToTheEnd", func(t *testing.T) {
		table := strings.ReplaceAll(uniq("readtoend"), "-", "_")
		exec(t, st, `CREATE TABLE public.`+table+` (n int)`)
		for _, hot := range []bool{false, true} {
			rows, err := store.StatementsOf(st, hot).Query(ctx, `INSERT INTO public.`+table+` SELECT 1 RETURNING n`)
			require.NoError(t, err)
			for rows.Next() {
			}
			require.NoError(t, rows.Err())
		}
		// On a connection of its own: one the store leaked would hold its pool's.
		c, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer c.Close(ctx)
		var n int64
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM public.`+table).Scan(&n))
		require.Equal(t, int64(2), n)
	})

	// Without a ListenURL the store does not LISTEN (a LISTEN through a transaction pooler hears nothing
	// once its transaction ends); with one, it listens there.
	t.Run("Listen", func(t *testing.T) {
		require.False(t, st.Listens())
		require.NoError(t, st.Listen(ctx, "nowhere", func() { t.Error("listened") }, func(string) {}))

		direct, err := store.Open(ctx, store.Options{URL: url, PoolSize: 2, PoolMode: store.PoolTransaction, ListenURL: url})
		require.NoError(t, err)
		defer direct.Close()
		require.True(t, direct.Listens())
		channel := uniq("chan")
		lctx, cancel := context.WithCancel(ctx)
		connected := make(chan struct{}, 1)
		got := make(chan string, 1)
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = direct.Listen(lctx, channel, func() { connected <- struct{}{} }, func(p string) { got <- p })
		})
		<-connected
		_, err = store.PoolOf(st).Exec(ctx, `SELECT pg_notify($1, 'through the pool')`, channel)
		require.NoError(t, err)
		require.Equal(t, "through the pool", <-got)
		cancel()
		wg.Wait()
	})
}
