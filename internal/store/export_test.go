package store

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Queries exposes the named queries to the external tests.
var Queries = queries

// StatisticsTables are the tables the hot statements read (AnalyzeOutgrown's), for the plan tests.
var StatisticsTables = statisticsTables

// TxSetting reads a run-time setting inside an explicit transaction, for the external tests.
func TxSetting(t interface {
	Helper()
	Fatal(...any)
}, tx *Tx, name string) string {
	t.Helper()
	var v string
	if err := tx.tx.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// SetStatsSlice makes a test's store read n partitions per statement of a stats pass, so that a small
// queue spans several. Call it before the store's first pass.
func SetStatsSlice(s *Store, n int) { s.statsSlice = n }

// SetInlineRows sets the most rows a push sends with its bump and commit (0: every push by COPY).
func SetInlineRows(s *Store, n int) { s.inlineRows = n }

// SetListenProbe sets how long Listen's session may stay silent before it is pinged.
func SetListenProbe(s *Store, d time.Duration) { s.listenProbe = d }

// SetSeedChunk makes a test's store seed a default-mode subscription n partitions per transaction.
func SetSeedChunk(s *Store, n int) { s.seedChunk = n }

// SchemaOf is the schema a test's store works in, to open another store on it.
func SchemaOf(s *Store) string { return s.schema }

// HandOver hands a store's changes to the stats pass of any store of its schema.
func HandOver(ctx context.Context, s *Store) error { return s.handOverChanges(ctx) }

// PoolOf exposes a store's general pool to the external tests.
func PoolOf(s *Store) *pgxpool.Pool { return s.pool.Pool }

// HotPoolOf exposes a store's hot pool (pops and acks) to the external tests.
func HotPoolOf(s *Store) *pgxpool.Pool { return s.hot.Pool }

// The package's tests trace every statement of their stores and note which named queries ran, so that
// a named query without a store test fails the run (see UnexercisedQueries).
func init() { queryTracer = executed }

var executed = newQueryRecorder()

// queryRecorder maps each traced statement back to its named query. Statements are the query text as
// embedded, except the few whose text is completed with fmt (an identifier in place of %s): those are
// matched by pattern.
type queryRecorder struct {
	byText   map[string]string
	patterns map[string]*regexp.Regexp
	mu       sync.Mutex
	ran      map[string]bool
}

func newQueryRecorder() *queryRecorder {
	r := &queryRecorder{byText: map[string]string{}, patterns: map[string]*regexp.Regexp{}, ran: map[string]bool{}}
	for name, sql := range queries {
		if !strings.Contains(sql, "%s") {
			r.byText[sql] = name
			continue
		}
		parts := strings.Split(sql, "%s")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		r.patterns[name] = regexp.MustCompile(`\A(?s)` + strings.Join(parts, `.+?`) + `\z`)
	}
	// Store.Pop runs variants of Pop (popStatements): each counts as running Pop.
	for _, sql := range PopVariants() {
		r.byText[sql] = "Pop"
	}
	return r
}

func (r *queryRecorder) note(sql string, err error) {
	if err != nil {
		return
	}
	name, ok := r.byText[sql]
	if !ok {
		for n, re := range r.patterns {
			if re.MatchString(sql) {
				name, ok = n, true
				break
			}
		}
	}
	if !ok {
		return // not a named query: a test's own SQL, or the migrations
	}
	r.mu.Lock()
	r.ran[name] = true
	r.mu.Unlock()
}

type sqlKey struct{}

func (r *queryRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if l, ok := ctx.Value(statementLogKey{}).(*StatementLog); ok {
		l.mu.Lock()
		l.sql = append(l.sql, d.SQL)
		l.mu.Unlock()
	}
	return context.WithValue(ctx, sqlKey{}, d.SQL)
}

type statementLogKey struct{}

// StatementLog collects the text of every statement run under a context of WithStatementLog.
type StatementLog struct {
	mu  sync.Mutex
	sql []string
}

// Statements returns what the log collected, in order.
func (l *StatementLog) Statements() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sql...)
}

// WithStatementLog returns a context under which the store's statements (single queries, not batches)
// are logged, so that a test sees exactly which text one call ran, whatever runs in parallel.
func WithStatementLog(ctx context.Context) (context.Context, *StatementLog) {
	l := &StatementLog{}
	return context.WithValue(ctx, statementLogKey{}, l), l
}

// PopVariants lists the text of every variant of Pop that Store.Pop may run.
func PopVariants() []string {
	var out []string
	for _, sql := range popStatements {
		if sql != "" {
			out = append(out, sql)
		}
	}
	return out
}

func (r *queryRecorder) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	sql, _ := ctx.Value(sqlKey{}).(string)
	r.note(sql, d.Err)
}

func (r *queryRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (r *queryRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.note(d.SQL, d.Err)
}

func (r *queryRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// UnexercisedQueries lists, sorted, the named queries that no statement of the package's tests ran
// successfully so far.
func UnexercisedQueries() []string {
	executed.mu.Lock()
	defer executed.mu.Unlock()
	var out []string
	for name := range queries {
		if !executed.ran[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// The background jobs' names, for tests that hold one's advisory lock as another broker would.
const (
	StatsJob     = statsJob
	RetentionJob = retentionJob
	EvictionJob  = evictionJob
)

// TxConn exposes an explicit transaction's own connection, for the plan tests.
func TxConn(tx *Tx) pgx.Tx { return tx.tx }

// Statements is what the store's own code runs autocommitted statements on: its pools as the store
// wraps them (under transaction pooling, each statement with the pool's settings), for the tests.
type Statements interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// StatementsOf exposes a store's general pool (hot false) or hot pool as its code uses them.
func StatementsOf(s *Store, hot bool) Statements {
	if hot {
		return s.hot
	}
	return s.pool
}
