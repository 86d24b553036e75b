package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// sharedStore opens a store on the database the package's tests share; they keep apart by using
// queues, groups and partitions of their own (uniq), so they run in parallel.
func sharedStore(t *testing.T) *store.Store {
	t.Helper()
	return openStore(t, testenv.SharedDatabase(t, "store"), "")
}

// schemaStore opens a store on a schema of its own in the shared database, for tests whose queries
// read or change every queue (global listings and totals, retention and eviction passes): the broker's
// statements only see their own schema.
func schemaStore(t *testing.T) *store.Store {
	t.Helper()
	return openStore(t, testenv.SharedDatabase(t, "store"), strings.ReplaceAll("t_"+uuid.NewString(), "-", ""))
}

// openStore opens a store on url in schema ("" = the default one), closed at the test's end. Its pool
// size of 8 gives each of the two pools 4 connections (some tests hold three of the general pool's).
func openStore(t *testing.T, url, schema string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), store.Options{URL: url, Schema: schema, PoolSize: 8})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// privateConn opens a store on a database of its own and holds one of its connections for the whole
// test, for tests that prepare statements or read plans on one connection.
func privateConn(t *testing.T) (*store.Store, *pgx.Conn) {
	t.Helper()
	st := openStore(t, testenv.NewDatabase(t), "")
	conn, err := store.PoolOf(st).Acquire(t.Context())
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	return st, conn.Conn()
}

var uniqN atomic.Int64

// uniq makes a name no other test uses.
func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, uniqN.Add(1)) }

// exec runs a test's own statement (set-up the API does not offer, such as moving a timestamp into
// the past) on the store's database.
func exec(t *testing.T, st *store.Store, sql string, args ...any) {
	t.Helper()
	_, err := store.PoolOf(st).Exec(context.Background(), sql, args...)
	require.NoError(t, err, sql)
}

// scalar reads one value with a test's own statement.
func scalar[T any](t *testing.T, st *store.Store, sql string, args ...any) T {
	t.Helper()
	var v T
	require.NoError(t, store.PoolOf(st).QueryRow(context.Background(), sql, args...).Scan(&v), sql)
	return v
}

// configure creates queue name with options o and returns the id of its Default partition.
func configure(t *testing.T, st *store.Store, name string, o store.QueueOptions) uuid.UUID {
	t.Helper()
	_, def, err := st.Queues().ConfigureQueue(t.Context(), name, o)
	require.NoError(t, err)
	return def
}

// partition returns the id of queue/name, creating both as a push does.
func partition(t *testing.T, st *store.Store, queue, name string) uuid.UUID {
	t.Helper()
	k := store.PartitionKey{Queue: queue, Partition: name}
	ids, err := st.EnsurePartitions(t.Context(), []store.PartitionKey{k})
	require.NoError(t, err)
	return ids[k]
}

// push stores one message per transaction id on partition pid, payload {"tx": id}.
func push(t *testing.T, st *store.Store, pid uuid.UUID, txids ...string) []uuid.UUID {
	t.Helper()
	rows := make([]store.PushRow, len(txids))
	ids := make([]uuid.UUID, len(txids))
	for i, tx := range txids {
		ids[i] = uuid.Must(uuid.NewV7())
		rows[i] = store.PushRow{PartitionID: pid, TransactionID: tx, ID: ids[i], Payload: fmt.Appendf(nil, `{"tx":%q}`, tx)}
	}
	out, err := st.Push(t.Context(), rows)
	require.NoError(t, err)
	for i, o := range out {
		require.True(t, o.Inserted, "push %s", txids[i])
	}
	return ids
}

// pop claims for group on queue (any partition when part is ""), without autoAck, and returns the
// messages and their lease (uuid.Nil when nothing was claimed).
func pop(t *testing.T, st *store.Store, queue, group, part string, batch int) ([]store.PoppedMessage, uuid.UUID) {
	t.Helper()
	p := store.PopParams{Queue: queue, Group: group, MaxPartitions: 1, Batch: batch, LeaseID: uuid.Must(uuid.NewV7())}
	if part != "" {
		p.Partition = &part
	}
	got, err := st.Pop(t.Context(), p)
	require.NoError(t, err)
	if len(got) == 0 {
		return nil, uuid.Nil
	}
	return got, got[0].LeaseID
}

// txids lists the transaction ids of popped messages in order.
func txids(ms []store.PoppedMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.TransactionID
	}
	return out
}

// complete acks every target as done: the cursor moves to the highest resolved seq of its
// (partition, group) and the lease ends, the way the engine completes a batch.
func complete(states map[store.ConsumerKey]*store.ConsumerState, msgs []store.ResolvedMessage, targets []store.AckTarget) store.AckEffects {
	top := map[store.ConsumerKey]int64{}
	n := map[store.ConsumerKey]int32{}
	for i, m := range msgs {
		if m.Found {
			k := targets[i].ConsumerKey
			top[k] = max(top[k], m.Seq)
			n[k]++
		}
	}
	var eff store.AckEffects
	for k, seq := range top {
		if st, ok := states[k]; ok && seq > st.Cursor {
			eff.Updates = append(eff.Updates, store.ConsumerUpdate{ConsumerKey: k, Cursor: seq, Release: true, Consumed: n[k]})
		}
	}
	return eff
}

// ackDone acks the given transaction ids of partition pid for group as completed.
func ackDone(t *testing.T, st *store.Store, pid uuid.UUID, group string, txs ...string) {
	t.Helper()
	targets := make([]store.AckTarget, len(txs))
	for i, tx := range txs {
		targets[i] = store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: pid, Group: group}, TransactionID: tx}
	}
	require.NoError(t, st.Ack(t.Context(), targets, func(s map[store.ConsumerKey]*store.ConsumerState, m []store.ResolvedMessage) (store.AckEffects, error) {
		return complete(s, m, targets), nil
	}))
}

// deadLetter moves message tx of partition pid to group's dead letters with error text e.
func deadLetter(t *testing.T, st *store.Store, pid uuid.UUID, group, tx, e string) {
	t.Helper()
	targets := []store.AckTarget{{ConsumerKey: store.ConsumerKey{PartitionID: pid, Group: group}, TransactionID: tx}}
	require.NoError(t, st.Ack(t.Context(), targets, func(_ map[store.ConsumerKey]*store.ConsumerState, m []store.ResolvedMessage) (store.AckEffects, error) {
		require.True(t, m[0].Found, "dead letter %s", tx)
		return store.AckEffects{DeadLetters: []store.DeadLetter{{ConsumerKey: targets[0].ConsumerKey, Seq: m[0].Seq, Error: e, Retries: 1}}}, nil
	}))
}

// backdate moves every message of partition pid d into the past.
func backdate(t *testing.T, st *store.Store, pid uuid.UUID, d time.Duration) {
	t.Helper()
	exec(t, st, `UPDATE messages SET created_at = created_at - make_interval(secs => $2) WHERE partition_id = $1`, pid, d.Seconds())
}

// pending lists the groups that have a pending-work record on partition pid.
func pending(t *testing.T, st *store.Store, pid uuid.UUID) []string {
	t.Helper()
	rows, err := store.PoolOf(st).Query(context.Background(), `SELECT consumer_group FROM pending_partitions WHERE partition_id = $1 ORDER BY 1`, pid)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var g string
		require.NoError(t, rows.Scan(&g))
		out = append(out, g)
	}
	require.NoError(t, rows.Err())
	return out
}

// refreshStats runs the stats refresh until it is this store's turn: the job's advisory lock is the
// schema's, and another store of the same schema may hold it for its own pass.
func refreshStats(t *testing.T, st *store.Store) {
	t.Helper()
	require.Eventually(t, func() bool {
		ran, err := st.Jobs().RefreshQueueStats(context.Background())
		require.NoError(t, err)
		return ran
	}, 10*time.Second, time.Millisecond)
}

// only keeps the names of got that are in want, in got's order (for listings of a shared database).
func only(got, want []string) []string {
	var out []string
	for _, g := range got {
		if slices.Contains(want, g) {
			out = append(out, g)
		}
	}
	return out
}
