package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The values of Options.PoolMode: how the broker's connections reach PostgreSQL.
const (
	// PoolSession (the default): each connection is a PostgreSQL session of its own, directly or
	// through a pooler in session mode. Session settings go in the startup packet and statements are
	// prepared once per connection.
	PoolSession = "session"
	// PoolTransaction: the connections go through a pooler in transaction-pooling mode (PgBouncer
	// pool_mode=transaction), which hands each transaction to whichever server session is free.
	// Nothing may rely on a session: see transactionPooling.
	PoolTransaction = "transaction"
)

// startupParams are the parameters a transaction pooler lets through in the startup packet (PgBouncer
// 1.18 refuses any other, `unsupported startup parameter`, and re-applies these itself when it moves a
// client to another server session).
var startupParams = map[string]bool{"application_name": true, "client_encoding": true}

// transactionPooling prepares the pools' configurations for a pooler in transaction mode and returns
// the statement that makes each pool's session settings local to one transaction:
//   - the startup packet carries only startupParams; every other runtime parameter (search_path,
//     timezone, statement_timeout, the hot pool's plan settings) becomes a set_config(…, true) run at
//     the start of each transaction, since a session-level SET would stay behind on a server session
//     that other clients share next;
//   - statements are never prepared under a name (a named statement lives in one server session,
//     which the next transaction may not get): pgx's describe cache sends each one unnamed;
//   - every statement runs inside a transaction that starts with those settings (pool and conn below),
//     so an autocommitted statement costs a BEGIN and a COMMIT more (two round trips).
func transactionPooling(cfgs ...*pgxpool.Config) []string {
	out := make([]string, len(cfgs))
	for i, cfg := range cfgs {
		cc := cfg.ConnConfig
		cc.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		local := map[string]string{}
		for k, v := range cc.RuntimeParams {
			if !startupParams[k] {
				local[k] = v
				delete(cc.RuntimeParams, k)
			}
		}
		calls := make([]string, 0, len(local))
		for _, k := range slices.Sorted(maps.Keys(local)) {
			calls = append(calls, fmt.Sprintf("set_config(%s, %s, true)", literal(k), literal(local[k])))
		}
		out[i] = fmt.Sprintf(q("PoolTxSettings"), strings.Join(calls, ", "))
	}
	return out
}

// literal quotes s as an SQL string (standard_conforming_strings, which pgx requires anyway).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// pool is a pgxpool.Pool whose statements, under transaction pooling (settings set), each run with the
// pool's session settings made transaction-local; in session mode it is the pgxpool.Pool, untouched.
type pool struct {
	*pgxpool.Pool
	settings string // the PoolTxSettings statement; "" in session mode
	// active is when acquireFrom last handed out a connection of this pool or one came back (UnixNano):
	// a wait that times out while others are being served met a busy pool, not a database it cannot
	// reach.
	active atomic.Int64
}

// Exec runs sql alone; see conn.Exec.
func (p *pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.settings == "" || ownProtocol(args) {
		return p.Pool.Exec(ctx, sql, args...)
	}
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer c.Release()
	return execLocal(ctx, c.Conn(), p.settings, sql, args)
}

// Query runs sql alone; the connection goes back to the pool when the rows are closed.
func (p *pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if p.settings == "" || ownProtocol(args) {
		return p.Pool.Query(ctx, sql, args...)
	}
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return queryLocal(ctx, c.Conn(), p.settings, sql, args, c.Release)
}

// QueryRow is Query for one row.
func (p *pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if p.settings == "" || ownProtocol(args) {
		return p.Pool.QueryRow(ctx, sql, args...)
	}
	rows, err := p.Query(ctx, sql, args...)
	return firstRow{rows, err}
}

// Begin starts a transaction; see BeginTx.
func (p *pool) Begin(ctx context.Context) (pgx.Tx, error) { return p.BeginTx(ctx, pgx.TxOptions{}) }

// BeginTx starts a transaction whose BEGIN carries the settings, in the same round trip.
func (p *pool) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	return p.Pool.BeginTx(ctx, withSettings(o, p.settings))
}

// SendBatch runs b on one connection of the pool; see conn.SendBatch.
func (p *pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if p.settings == "" {
		return p.Pool.SendBatch(ctx, b)
	}
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		return failedBatch{err}
	}
	return &releasing{BatchResults: conn{pooledConn: c, settings: p.settings}.SendBatch(ctx, b), release: c.Release}
}

// conn is a connection of a pool, acquired by the store's own code (pops, acks, pushes, explicit
// transactions). Under transaction pooling, what it runs outside a transaction gets the settings first,
// in the same round trip; inside one (after a BEGIN this type sent with the settings, or a batch it
// gave them to) statements go as they are. In session mode it is the pgxpool.Conn, untouched.
type conn struct {
	*pooledConn
	settings string
	pool     *pool // nil: not from acquireFrom
}

// Release gives the connection back and notes the pool's activity.
func (c conn) Release() {
	c.pooledConn.Release()
	if c.pool != nil {
		c.pool.active.Store(time.Now().UnixNano())
	}
}

// pooledConn names pgxpool.Conn so that embedding it in conn keeps its Conn method reachable.
type pooledConn = pgxpool.Conn

// outside reports whether a statement sent now needs the settings of its own: transaction pooling,
// and no transaction open on the connection.
func (c conn) outside() bool {
	return c.settings != "" && c.Conn().PgConn().TxStatus() == 'I'
}

// Exec runs sql; outside a transaction, as one implicit transaction with the settings.
func (c conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if !c.outside() || ownProtocol(args) {
		return c.pooledConn.Exec(ctx, sql, args...)
	}
	return execLocal(ctx, c.Conn(), c.settings, sql, args)
}

// Query runs sql; outside a transaction, as one implicit transaction with the settings.
func (c conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !c.outside() || ownProtocol(args) {
		return c.pooledConn.Query(ctx, sql, args...)
	}
	return queryLocal(ctx, c.Conn(), c.settings, sql, args, nil)
}

// QueryRow is Query for one row.
func (c conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if !c.outside() || ownProtocol(args) {
		return c.pooledConn.QueryRow(ctx, sql, args...)
	}
	rows, err := c.Query(ctx, sql, args...)
	return firstRow{rows, err}
}

// Begin starts a transaction; see BeginTx.
func (c conn) Begin(ctx context.Context) (pgx.Tx, error) { return c.BeginTx(ctx, pgx.TxOptions{}) }

// BeginTx starts a transaction whose BEGIN carries the settings, in the same round trip.
func (c conn) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	return c.pooledConn.BeginTx(ctx, withSettings(o, c.settings))
}

// SendBatch runs b; outside a transaction, inside one opened with the settings first (one round trip
// more): pgx describes a batch's new statements in an exchange of their own before sending it, which
// must see the settings too. A batch that begins with its own BEGIN (Ack and Push open their
// transactions that way) commits itself, and its BEGIN only draws a warning; any other is committed when
// its results are closed.
func (c conn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if !c.outside() {
		return c.pooledConn.SendBatch(ctx, b)
	}
	if _, err := c.pooledConn.Exec(ctx, q("Begin")+";\n"+c.settings); err != nil {
		return failedBatch{err}
	}
	br := c.pooledConn.SendBatch(ctx, b)
	if len(b.QueuedQueries) > 0 && b.QueuedQueries[0].SQL == q("Begin") {
		return br
	}
	return &committing{BatchResults: br, ctx: ctx, c: c.Conn()}
}

// committing ends the transaction conn.SendBatch opened for a batch when its results are closed.
type committing struct {
	pgx.BatchResults
	ctx context.Context
	c   *pgx.Conn
}

func (r *committing) Close() error {
	err := r.BatchResults.Close()
	end := q("Commit")
	if err != nil {
		end = q("Rollback")
	}
	if r.c.IsClosed() {
		return err
	}
	if _, cerr := r.c.Exec(context.WithoutCancel(r.ctx), end); err == nil {
		err = cerr
	}
	return err
}

// ownProtocol reports a statement that names its query mode (VACUUM, which must run outside any
// transaction, by the simple protocol): it runs as written, so it must not depend on the settings.
func ownProtocol(args []any) bool {
	if len(args) == 0 {
		return false
	}
	_, ok := args[0].(pgx.QueryExecMode)
	return ok
}

// withSettings adds the settings to the BEGIN of o (pgx sends a BeginQuery by the simple protocol, so
// both go in one round trip).
func withSettings(o pgx.TxOptions, settings string) pgx.TxOptions {
	if settings == "" {
		return o
	}
	begin := o.BeginQuery
	if begin == "" {
		begin = q("Begin")
		if o.IsoLevel != "" {
			begin += " ISOLATION LEVEL " + string(o.IsoLevel)
		}
		if o.AccessMode != "" {
			begin += " " + string(o.AccessMode)
		}
		if o.DeferrableMode != "" {
			begin += " " + string(o.DeferrableMode)
		}
	}
	o.BeginQuery = begin + ";\n" + settings
	return o
}

// execLocal runs sql in a transaction of its own that begins with the settings: BEGIN and the
// settings in one round trip, the statement (pgx describes it first, the first time, inside the
// transaction where the settings hold), the COMMIT.
func execLocal(ctx context.Context, c *pgx.Conn, settings, sql string, args []any) (pgconn.CommandTag, error) {
	tx, err := c.BeginTx(ctx, withSettings(pgx.TxOptions{}, settings))
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return tag, err
	}
	return tag, tx.Commit(ctx)
}

// queryLocal is execLocal for a statement that returns rows: the transaction ends, and release (if
// any) runs, once the rows are closed.
func queryLocal(ctx context.Context, c *pgx.Conn, settings, sql string, args []any, release func()) (pgx.Rows, error) {
	tx, err := c.BeginTx(ctx, withSettings(pgx.TxOptions{}, settings))
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		if release != nil {
			release()
		}
		return nil, err
	}
	return &txRows{Rows: rows, ctx: ctx, tx: tx, release: release}, nil
}

// txRows are the rows of queryLocal's statement: closing them ends its transaction and releases the
// connection.
type txRows struct {
	pgx.Rows
	ctx     context.Context
	tx      pgx.Tx
	release func()
	closed  bool
	err     error
}

// Next ends the transaction as soon as the rows are exhausted: pgx closes rows by itself at that point,
// so callers that read to the end commonly never call Close, and the statement's effects must not wait
// for it (a connection released inside a transaction is discarded, which rolls them back).
func (r *txRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *txRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	if r.Rows.Err() != nil {
		_ = r.tx.Rollback(context.WithoutCancel(r.ctx))
	} else {
		r.err = r.tx.Commit(context.WithoutCancel(r.ctx))
	}
	if r.release != nil {
		r.release()
	}
}

func (r *txRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// firstRow is a pgx.Row over rows, as pgx's own QueryRow gives.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// releasing gives the connection of pool.SendBatch back when the batch is closed.
type releasing struct {
	pgx.BatchResults
	release func()
}

func (r *releasing) Close() error {
	err := r.BatchResults.Close()
	r.release()
	return err
}

// failedBatch is the results of a batch that could not get a connection.
type failedBatch struct{ err error }

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return firstRow{err: f.err} }
func (f failedBatch) Close() error                     { return f.err }
func (f failedBatch) Tx() pgx.Tx                       { return nil }
