package store

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queen-go/queen/internal/pgschema"
)

//go:embed queries/*.sql
var queryFiles embed.FS

// queries holds every named query of queries/*.sql, keyed by its `-- name:` header.
var queries = pgschema.MustQueries(queryFiles, "queries")

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
	// DeferMigrate leaves the schema migration to an explicit Migrate call, so that a broker can start
	// while PostgreSQL is unreachable and migrate when it appears.
	DeferMigrate bool
	// Clock, when set, is the instant the time-dependent queries decide by (lease expiry, retry delay,
	// delayed processing, window buffer, maxWaitTimeSeconds, subscription points) instead of the
	// database clock. Only tests set it, to make time pass without waiting: brokers sharing a database
	// must share one clock, and the database's is the only one they all see (docs/decisions.md).
	Clock func() time.Time
}

// Store is a pool of connections to the broker's schema.
type Store struct {
	pool           *pgxpool.Pool
	schema         string
	url            string
	acquireTimeout time.Duration
	clock          func() time.Time // Options.Clock; nil: the database clock
	statsSlice     int              // partitions per statement of a stats pass (defaultStatsSlice; tests set less)
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
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		encodeUUIDsNatively(c.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", interpret(err))
	}
	s := &Store{pool: pool, schema: o.Schema, url: o.URL, acquireTimeout: o.AcquireTimeout, clock: o.Clock}
	if s.acquireTimeout <= 0 {
		s.acquireTimeout = 5 * time.Second
	}
	if o.DeferMigrate {
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
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
func (s *Store) Close() { s.pool.Close() }

// Ping does one database round-trip.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, q("Ping")).Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", interpret(err))
	}
	return nil
}

// PoolStats reports the pool's size for the metrics surface.
func (s *Store) PoolStats() (total, idle, waiting int32) {
	st := s.pool.Stat()
	return st.TotalConns(), st.IdleConns(), int32(st.EmptyAcquireCount() - st.CanceledAcquireCount())
}

// acquire takes a connection, waiting at most the acquire timeout: an exhausted pool is reported as
// ErrPool rather than parking the request until its client gives up.
func (s *Store) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, s.acquireTimeout)
	defer cancel()
	c, err := s.pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, ErrPool
		}
		return nil, interpret(err)
	}
	return c, nil
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
	s    *Store
	conn *pgxpool.Conn
	tx   pgx.Tx
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

// collect runs a named query on the pool and scans every row with scan.
func collect[T any](ctx context.Context, s *Store, name string, scan func(pgx.Rows) (T, error), args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q(name), args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r.(pgx.Rows)) })
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, interpret(err))
	}
	return out, nil
}

// collectMap runs a named query whose rows are (key, value) pairs and returns them keyed.
func collectMap[K comparable, V any](ctx context.Context, s *Store, name string, scan func(pgx.Rows) (K, V, error), args ...any) (map[K]V, error) {
	type pair struct {
		k K
		v V
	}
	rows, err := collect(ctx, s, name, func(r pgx.Rows) (p pair, err error) {
		p.k, p.v, err = scan(r)
		return p, err
	}, args...)
	if err != nil {
		return nil, err
	}
	out := make(map[K]V, len(rows))
	for _, p := range rows {
		out[p.k] = p.v
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
