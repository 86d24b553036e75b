package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queen-go/queen/internal/pgschema"
)

//go:embed queries/*.sql
var queryFiles embed.FS

// queries holds every named query of queries/*.sql, keyed by its `-- name:` header, its fragments
// expanded (fragments.go).
var queries = pgschema.MustQueries(withFragments(queryFiles, "queries"), "queries")

// q is the named statement of queries/*.sql.
var q = queries.Get

// queryTracer, when set, traces every statement of the stores opened afterwards. Only this package's
// tests set it (to check that every named query is exercised); unset, Open leaves the driver untraced.
var queryTracer pgx.QueryTracer

// Options configure [Open].
type Options struct {
	URL              string
	Schema           string
	PoolSize         int32
	AcquireTimeout   time.Duration // how long a request may wait for a free connection before ErrPool
	StatementTimeout time.Duration
	// PoolMode is PoolSession ("" too) or PoolTransaction (pooling.go): whether URL reaches PostgreSQL
	// through a pooler in transaction-pooling mode.
	PoolMode string
	// ListenURL, when set, is where LISTEN connects instead of URL: a direct session, since LISTEN
	// needs one and a transaction pooler gives none. Under PoolTransaction without it, Listen does not
	// listen.
	ListenURL string
	// DeferMigrate leaves the schema migration to an explicit Migrate call, so that a broker can start
	// while PostgreSQL is unreachable and migrate when it appears.
	DeferMigrate bool
	// Clock, when set, is the instant the time-dependent queries decide by (lease expiry, retry delay,
	// delayed processing, window buffer, maxWaitTimeSeconds, subscription points) instead of the
	// database clock. Only tests set it, to make time pass without waiting: brokers sharing a database
	// must share one clock, and the database's is the only one they all see (docs/decisions.md).
	Clock func() time.Time

	standby bool // OpenReplica: a read replica, reached as its URL says (readWriteOnly does not apply)
}

// Store holds the connections to the broker's schema: two pools that share Options.PoolSize.
type Store struct {
	pool *pool
	// hot serves only the pop statement and the ack transactions: its sessions run with hotParams, so
	// those statements need no settings statement of their own. Nothing else may use it: every other
	// statement (explicit transactions, migrations, stats passes, pushes) expects the defaults.
	hot            *pool
	schema         string
	url            string
	listenURL      string        // Options.ListenURL
	noListen       bool          // transaction pooling without a ListenURL: Listen does not listen
	listenProbe    time.Duration // silence after which Listen checks its session (defaultListenProbe; tests set less)
	inlineRows     int           // rows of a push sent with its bump and commit (defaultInlineRows; tests set 0)
	acquireTimeout time.Duration
	clock          func() time.Time // Options.Clock; nil: the database clock
	statsSlice     int              // partitions per statement of a stats pass (defaultStatsSlice; tests set less)
	seedChunk      int              // partitions per transaction of a subscription's seed (defaultSeedChunk; tests set less)
	changed        changes          // what this store's writes changed since the last hand-over to the stats pass
	statsSweep     statsSweep       // where the stats pass's slow sweep over every partition goes on
}

// Open connects to PostgreSQL and applies the schema migrations. Every connection runs with
// search_path set to the broker's own schema, so the SQL files never name it.
func Open(ctx context.Context, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("store: parse database url: %w", err)
	}
	if o.Schema == "" {
		o.Schema = "queenmq"
	}
	if o.PoolSize > 0 {
		cfg.MaxConns = o.PoolSize
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	cfg.ConnConfig.RuntimeParams["application_name"] = "queen"
	if o.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(o.StatementTimeout.Milliseconds())
	}
	if queryTracer != nil {
		cfg.ConnConfig.Tracer = queryTracer
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	if !o.standby {
		readWriteOnly(cfg.ConnConfig, o.URL)
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		encodeUUIDsNatively(c.TypeMap())
		return nil
	}
	hotCfg := cfg.Copy()
	cfg.MaxConns, hotCfg.MaxConns = splitPool(cfg.MaxConns)
	for k, v := range hotParams {
		hotCfg.ConnConfig.RuntimeParams[k] = v
	}
	var general, hotSettings string
	switch o.PoolMode {
	case "", PoolSession:
	case PoolTransaction:
		ss := transactionPooling(cfg, hotCfg)
		general, hotSettings = ss[0], ss[1]
	default:
		return nil, fmt.Errorf("store: pool mode %q: want %s or %s", o.PoolMode, PoolSession, PoolTransaction)
	}
	gp, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", interpret(err))
	}
	hp, err := pgxpool.NewWithConfig(ctx, hotCfg)
	if err != nil {
		gp.Close()
		return nil, fmt.Errorf("store: connect: %w", interpret(err))
	}
	s := &Store{pool: &pool{Pool: gp, settings: general}, hot: &pool{Pool: hp, settings: hotSettings}, schema: o.Schema, url: o.URL,
		listenURL: o.ListenURL, noListen: o.PoolMode == PoolTransaction && o.ListenURL == "",
		acquireTimeout: o.AcquireTimeout, clock: o.Clock, listenProbe: defaultListenProbe, inlineRows: defaultInlineRows}
	if s.acquireTimeout <= 0 {
		s.acquireTimeout = 5 * time.Second
	}
	if o.DeferMigrate {
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// readWriteOnly makes a URL naming several hosts (a primary and its standbys) connect only to the one
// taking writes, unless the URL chose target_session_attrs itself: every statement of the broker writes
// or must see the latest writes. A refusal because a host is a standby carries ErrReadOnly, so /health
// and the logs can say a failover is under way rather than that PostgreSQL is gone.
func readWriteOnly(cfg *pgx.ConnConfig, rawURL string) {
	validate := cfg.ValidateConnect
	if validate == nil {
		if len(cfg.Fallbacks) == 0 || strings.Contains(rawURL, "target_session_attrs") || os.Getenv("PGTARGETSESSIONATTRS") != "" {
			return
		}
		validate = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	}
	cfg.ValidateConnect = func(ctx context.Context, c *pgconn.PgConn) error {
		if err := validate(ctx, c); err != nil {
			if c.ParameterStatus("in_hot_standby") == "on" || c.ParameterStatus("default_transaction_read_only") == "on" {
				return fmt.Errorf("%w: %s is a standby: %w", ErrReadOnly, c.Conn().RemoteAddr(), err)
			}
			return err
		}
		return nil
	}
}

// hotParams are the session settings of the hot pool (pops and acks). The statements it serves run
// their generic plan: they are built so that the generic plan is the right one at any size (index walks
// bounded by the batch), and re-planning a statement of Pop's size on every call cost more than running
// it (measured with pg_stat_statements.track_planning: 6.6 ms of planning per pop against 3.9 ms of
// execution). A generic plan is built once per connection, from the table sizes of that moment, and
// kept until the next ANALYZE of a table it reads; built while messages was small, AckResolve's plan
// read messages with a sequential scan and kept doing so as the table grew (10-12 ms per ack instead of
// 0.2), so sequential scans are off: every statement of this pool reads by key, bounded by the batch.
// So are bitmap scans: a bitmap scan returns its rows unordered, and each step of Pop's walk of the
// line (an ORDER BY … LIMIT 1 the line's index returns in order) planned as one read the rest of the
// line and sorted it, every step (docs/performance.md, Known issue 16); a lookup by key reads as few
// rows with a plain index scan.
// These were transaction-local settings (HotPathSettings, which pushes and stats passes still use); as
// the pool's session settings they cost no statement (docs/architecture.md, "Connections").
// synchronous_commit stays the database's: acks wait for their WAL flush, and Pop turns it off for its
// own transaction (queries/pop.sql).
var hotParams = map[string]string{"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off", "enable_bitmapscan": "off"}

// HotSessionParams returns (a copy of) the session settings pops and acks run with, for tools that
// must plan those statements as the broker does (the benchmark's EXPLAIN of Pop).
func HotSessionParams() map[string]string { return maps.Clone(hotParams) }

// splitPool divides the connection budget between the general pool and the hot pool: half each (the
// hot pool's statements are most of the load, but pushes, the background jobs and the API's other
// requests must not wait behind consumers). A budget under 2 still gets one connection each.
func splitPool(n int32) (general, hot int32) {
	hot = max(n/2, 1)
	return max(n-hot, 1), hot
}

// now is the instant parameter of the time-dependent queries, which read it as
// coalesce($n::timestamptz, now()): NULL, the database clock, unless Options.Clock is set.
func (s *Store) now() pgtype.Timestamptz {
	if s.clock == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: s.clock(), Valid: true}
}

// Close releases every connection.
func (s *Store) Close() {
	s.pool.Close()
	s.hot.Close()
}

// Ping does one database round-trip.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, q("Ping")).Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", interpret(err))
	}
	return nil
}

// PoolStats reports the size of both pools together for the metrics surface, and how many acquires
// found them empty and waited since the start (a count that only grows; pgxpool keeps no gauge of the
// acquires waiting now).
func (s *Store) PoolStats() (total, idle, acquireWaits int32) {
	for _, p := range []*pgxpool.Pool{s.pool.Pool, s.hot.Pool} {
		st := p.Stat()
		total += st.TotalConns()
		idle += st.IdleConns()
		acquireWaits += int32(st.EmptyAcquireCount() - st.CanceledAcquireCount())
	}
	return total, idle, acquireWaits
}

// acquire takes a connection of the general pool, waiting at most the acquire timeout: an exhausted
// pool is reported as ErrPool rather than parking the request until its client gives up.
func (s *Store) acquire(ctx context.Context) (conn, error) {
	return s.acquireFrom(ctx, s.pool)
}

// HotConns is the size of the hot pool, which serves pops and acks only.
func (s *Store) HotConns() int { return int(s.hot.Config().MaxConns) }

// AcquireTimeout is how long a request waits for a connection before ErrPool (Options.AcquireTimeout).
func (s *Store) AcquireTimeout() time.Duration { return s.acquireTimeout }

// acquireHot takes a connection of the hot pool (hotParams), for Pop and Ack only.
func (s *Store) acquireHot(ctx context.Context) (conn, error) {
	return s.acquireFrom(ctx, s.hot)
}

func (s *Store) acquireFrom(ctx context.Context, p *pool) (conn, error) {
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, s.acquireTimeout)
	defer cancel()
	c, err := p.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			if st := p.Stat(); st.AcquiredConns() < st.MaxConns() && st.IdleConns() == 0 && p.active.Load() < start.Add(-s.acquireTimeout).UnixNano() {
				// Not every connection was busy, none sat idle, and none was handed out or given back
				// meanwhile (nor for as long before): the time went on establishing one, which is what a
				// database being failed over or restarted looks like. When connections kept coming and
				// going, the free ones seen here were only passing from one request to the next, as in a
				// burst of thousands of requests on a host too busy to hand them on at once; an idle one
				// is a connection given back whose next waiter the scheduler has not run yet (a single
				// slow statement under a loaded race-detector run left one idle past two timeouts).
				return conn{}, errors.Join(ErrUnavailable, fmt.Errorf("store: no connection established within %v: %w", s.acquireTimeout, actx.Err()))
			}
			return conn{}, ErrPool
		}
		return conn{}, interpret(err)
	}
	p.active.Store(time.Now().UnixNano())
	return conn{pooledConn: c, settings: p.settings, pool: p}, nil
}

// withTx runs fn inside one transaction on a pooled connection.
func (s *Store) withTx(ctx context.Context, fn func(pgx.Tx) error) error {
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return interpret(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return interpret(tx.Commit(ctx))
}

// Tx is an explicit transaction, for operations that must commit together (transactions of the API).
type Tx struct {
	s       *Store
	conn    conn
	tx      pgx.Tx
	changed changes // handed to the store's notes once the transaction commits
}

// Begin starts an explicit transaction on a pooled connection. Its BEGIN carries TxPlanSettings (no
// sequential scans for the transaction's key lookups), in one round-trip.
func (s *Store) Begin(ctx context.Context) (*Tx, error) {
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := c.BeginTx(ctx, pgx.TxOptions{BeginQuery: q("Begin") + ";\n" + q("TxPlanSettings")})
	if err != nil {
		c.Release()
		return nil, fmt.Errorf("store: begin: %w", interpret(err))
	}
	return &Tx{s: s, conn: c, tx: tx}, nil
}

// Commit commits and returns the connection to the pool.
func (t *Tx) Commit(ctx context.Context) error {
	defer t.conn.Release()
	if err := t.tx.Commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", interpret(err))
	}
	t.s.changed.merge(&t.changed)
	return nil
}

// Rollback aborts and returns the connection to the pool.
func (t *Tx) Rollback(ctx context.Context) error {
	defer t.conn.Release()
	if err := t.tx.Rollback(ctx); err != nil {
		return fmt.Errorf("store: rollback: %w", interpret(err))
	}
	return nil
}

// Every row the store reads goes through eachRow, directly or through collectRows and the collect
// helpers built on it. Reading the rows to the end, or closing them on the way out, is what ends the
// statement's own transaction under transaction pooling (txRows) and gives its connection back: one
// loop that always does so cannot be got wrong by a reader that forgets to.

// eachRow calls each for every row of rows, then closes them, and returns the first error of each or
// of the rows. Readers that fold rows into a structure of their own (a map, a slice indexed by a
// column, running sums) use it directly, so that no slice of rows is built only to be walked again.
func eachRow(rows pgx.Rows, each func(pgx.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// collectRows scans every row of rows with scan. With no rows it answers an empty slice, not nil, as
// pgx.CollectRows did before it: the readers' callers were written against that, and encoding/json
// writes the two differently ([] and null).
func collectRows[T any](rows pgx.Rows, scan func(pgx.Rows) (T, error)) ([]T, error) {
	out := []T{}
	err := eachRow(rows, func(r pgx.Rows) error {
		v, err := scan(r)
		out = append(out, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanOne is the scan of a row of one column.
func scanOne[T any](r pgx.Rows) (v T, err error) {
	err = r.Scan(&v)
	return v, err
}

// collect runs a named query on the pool and scans every row with scan.
func collect[T any](ctx context.Context, s *Store, name string, scan func(pgx.Rows) (T, error), args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q(name), args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	out, err := collectRows(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	return out, nil
}

// jitOff turns JIT compilation off for the rest of tx: statements whose cost estimate grows with the
// whole schema while they read little would otherwise be compiled at every execution.
func jitOff(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SET LOCAL jit = off")
	return err
}

// collectViews is collect for the consumer-group and per-group count views (queries/groups.sql,
// queues.sql), run with JIT off in a transaction of their own: they visit every (group, partition)
// pair, so their estimated cost crosses jit_above_cost as soon as a queue has a few hundred
// partitions (or a fresh database has no statistics yet), and PostgreSQL then spends about half a
// second compiling a plan whose execution takes a few milliseconds (measured on the consumer-group
// listing of a 4-partition queue: 1.18 s with JIT, 0.6 ms of it executing).
func collectViews[T any](ctx context.Context, s *Store, name string, scan func(pgx.Rows) (T, error), args ...any) ([]T, error) {
	var out []T
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if err := jitOff(ctx, tx); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q(name), args...)
		if err != nil {
			return err
		}
		out, err = collectRows(rows, scan)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	return out, nil
}

// collectMap runs a named query whose rows are (key, value) pairs and returns them keyed.
func collectMap[K comparable, V any](ctx context.Context, s *Store, name string, scan func(pgx.Rows) (K, V, error), args ...any) (map[K]V, error) {
	rows, err := s.pool.Query(ctx, q(name), args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	out := map[K]V{}
	err = eachRow(rows, func(r pgx.Rows) error {
		k, v, err := scan(r)
		if err == nil {
			out[k] = v
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	return out, nil
}

// The driver's nullable types stay inside this package: rows carry plain Go values (nil = NULL), and
// these convert the parameters that may be NULL.

// nullText is NULL for "", the SQL's "no filter".
func nullText(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

// nullTime is NULL for the zero time, the SQL's "no bound".
func nullTime(t time.Time) pgtype.Timestamptz { return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()} }

func pgUUID(u *uuid.UUID) pgtype.UUID {
	if u == nil {
		return pgtype.UUID{}
	}
	return pgtype.UUID{Bytes: *u, Valid: true}
}

func pgText(s *string) pgtype.Text {
	if s == nil {
		return pgtype.Text{}
	}
	return pgtype.Text{String: *s, Valid: true}
}
