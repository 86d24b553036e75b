package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// baseliner measures what the same PostgreSQL accepts for plain multi-row INSERTs of rows like the
// broker's messages, so a push rate can be read as a fraction of the database's own ceiling.
type baseliner struct {
	pool   *pgxpool.Pool
	schema string
	url    string
}

// BaselineResult is one baseline measurement.
type BaselineResult struct {
	Batch       int     `json:"batch"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Rows        int64   `json:"rows"`
	Rate        float64 `json:"rows_per_s"`
	Latency     Summary `json:"insert_latency"`
	Fraction    float64 `json:"push_fraction"` // broker push rate / baseline rate
	// PGMicrosPerRow is PostgreSQL's CPU per inserted row (0: its pid unknown), to hold against
	// its CPU per pushed message in the scenario.
	PGMicrosPerRow float64 `json:"pg_us_per_row,omitempty"`
}

// newPool opens a pool of at most conns connections to pgURL, with search_path set to schema unless
// schema is "".
func newPool(ctx context.Context, pgURL string, conns int, schema string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(pgURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(conns)
	if schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

func newBaseliner(ctx context.Context, pgURL string, conns int) (*baseliner, error) {
	pool, err := newPool(ctx, pgURL, conns, "")
	if err != nil {
		return nil, err
	}
	b := &baseliner{pool: pool, schema: "bench_scratch", url: pgURL}
	_, err = pool.Exec(ctx, `
		DROP SCHEMA IF EXISTS bench_scratch CASCADE;
		CREATE SCHEMA bench_scratch;
		CREATE TABLE bench_scratch.messages (
			partition_id   uuid NOT NULL,
			seq            bigint NOT NULL,
			id             uuid NOT NULL,
			transaction_id text NOT NULL,
			payload        jsonb,
			created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
			PRIMARY KEY (partition_id, seq),
			UNIQUE (partition_id, transaction_id)
		)`)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("create scratch schema: %w", err)
	}
	return b, nil
}

// close drops the scratch schema and closes the pool.
func (b *baseliner) close(ctx context.Context) {
	_, _ = b.pool.Exec(ctx, `DROP SCHEMA IF EXISTS bench_scratch CASCADE`)
	b.pool.Close()
}

// settings returns the PostgreSQL settings that matter for write throughput.
func (b *baseliner) settings(ctx context.Context) string {
	var parts []string
	for _, name := range []string{"server_version", "fsync", "synchronous_commit", "full_page_writes", "shared_buffers", "wal_buffers", "max_wal_size", "max_connections"} {
		var v string
		if err := b.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err == nil {
			parts = append(parts, name+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// run inserts batches of batch rows from conc workers for d, each batch into one of partitions
// partitions (round robin), each in its own implicit transaction, like one push request. pgPID is
// PostgreSQL's postmaster (0: unknown), whose process tree's CPU is measured meanwhile. The table is
// created empty, and every run, failed or not, leaves it so (settle).
func (b *baseliner) run(ctx context.Context, batch, conc, partitions, msgSize int, d time.Duration, pgPID int) (_ *BaselineResult, err error) {
	defer func() {
		if serr := b.settle(ctx); err == nil {
			err = serr
		}
	}()
	parts := make([][16]byte, partitions)
	seqs := make([]atomic.Int64, partitions)
	for i := range parts {
		parts[i] = uuidV4()
	}
	payload := string(payloadOf(msgSize))
	sql := insertSQL(batch)
	var ctr atomic.Uint64
	args := make([][]any, conc) // one argument slice per worker, reused
	var pg0 time.Duration
	if pgPID != 0 {
		pg0 = treeCPU(pgPID)
	}
	run, err := timed(conc, d, func(w, n int) func() (int, error) {
		p := int(ctr.Add(1) % uint64(partitions))
		base := seqs[p].Add(int64(batch)) - int64(batch)
		a := args[w][:0]
		for i := range batch {
			a = append(a, parts[p], base+int64(i)+1, uuidV4(), fmt.Sprintf("w%d-%d-%d", w, n, i), payload)
		}
		args[w] = a
		return func() (int, error) {
			_, err := b.pool.Exec(ctx, sql, a...)
			return batch, err
		}
	})
	if err != nil {
		return nil, err
	}
	el := run.elapsed
	res := &BaselineResult{Batch: batch, Concurrency: conc, Seconds: round1(el.Seconds()), Rows: run.rows,
		Rate: float64(run.rows) / el.Seconds(), Latency: run.latency}
	if pgPID != 0 && run.rows > 0 {
		res.PGMicrosPerRow = round1(float64((treeCPU(pgPID) - pg0).Microseconds()) / float64(run.rows))
	}
	return res, nil
}

// settle leaves nothing of a run for the scenarios after it to pay for. The table is emptied, or
// autovacuum and autoanalyze would process its rows (about 750 000 after batch 100) inside a later
// window: the sweeps saw both run on it in fanout-g1's. The pool's connections are closed because
// an idle backend reports its table statistics only up to 10 s later, so the run's counts would
// reach autovacuum, and the per-window relation figures, during the next scenario; a backend that
// exits reports them at once.
func (b *baseliner) settle(ctx context.Context) error {
	if _, err := b.pool.Exec(ctx, `TRUNCATE bench_scratch.messages`); err != nil {
		return fmt.Errorf("empty the scratch table: %w", err)
	}
	b.pool.Reset()
	return nil
}

// timedRun is what timed measured.
type timedRun struct {
	rows    int64
	elapsed time.Duration
	latency Summary
}

// timed runs workers goroutines for d, each calling prepare for its next call n and then timing the
// function it returns, which reports the rows it stored. The first error stops its worker and is
// returned after all have stopped.
func timed(workers int, d time.Duration, prepare func(w, n int) func() (int, error)) (timedRun, error) {
	var (
		rows  atomic.Int64
		lat   Recorder
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	stopAt := start.Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(stopAt); n++ {
				call := prepare(w, n)
				t := time.Now()
				k, err := call()
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				lat.Add(time.Since(t))
				rows.Add(int64(k))
			}
		}()
	}
	wg.Wait()
	return timedRun{rows: rows.Load(), elapsed: time.Since(start), latency: lat.Summary()}, first
}

// insertSQL is a plain multi-row INSERT of n rows.
func insertSQL(n int) string {
	return multiRowInsert("INSERT INTO bench_scratch.messages (partition_id, seq, id, transaction_id, payload)", n, "")
}

// multiRowInsert is head followed by VALUES of n rows of five parameters each (partition id, seq, id,
// transactionId, payload as jsonb), every row ending with the literal columns of tail.
func multiRowInsert(head string, n int, tail string) string {
	var sb strings.Builder
	sb.WriteString(head)
	sb.WriteString(" VALUES ")
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		k := i * 5
		fmt.Fprintf(&sb, "($%d,$%d,$%d,$%d,$%d::jsonb%s)", k+1, k+2, k+3, k+4, k+5, tail)
	}
	return sb.String()
}

func uuidV4() [16]byte {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}
