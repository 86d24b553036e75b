package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The SKIP LOCKED baseline is the queue users hand-roll on PostgreSQL: one table, and workers that each
// run, in one transaction, SELECT … ORDER BY id FOR UPDATE SKIP LOCKED LIMIT n, then DELETE of the rows
// they got. It keeps no per-partition order, no leases, no consumer groups (a fan-out is one table per
// subscriber). pop-ack and fanout are reported as ratios of it measured in the same run, on the same
// PostgreSQL, with as many workers and the same window (-skip-locked).

// SkipLockedResult is one SKIP LOCKED baseline measurement.
type SkipLockedResult struct {
	Tables    int     `json:"tables"`  // one per subscriber (fan-out)
	Workers   int     `json:"workers"` // per table
	Producers int     `json:"producers,omitempty"`
	Batch     int     `json:"batch"`
	Seconds   float64 `json:"seconds"`
	Rows      int64   `json:"rows"` // deleted, over all tables (deliveries)
	Inserted  int64   `json:"inserted,omitempty"`
	Rate      float64 `json:"rows_per_s"`
	Latency   Summary `json:"tx_latency"` // one consuming transaction
	Ratio     float64 `json:"ratio"`      // the scenario's deliveries / Rate
	Verified  bool    `json:"verified"`   // every row deleted exactly once
	Problem   string  `json:"problem,omitempty"`
}

// slTable is the name of the i-th baseline table.
func slTable(i int) string { return fmt.Sprintf("bench_scratch.sl_%d", i) }

// slCreate (re)creates n empty baseline tables.
func (b *baseliner) slCreate(ctx context.Context, n int) error {
	for i := range n {
		_, err := b.pool.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
			CREATE TABLE %[1]s (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload jsonb NOT NULL,
				created_at timestamptz NOT NULL DEFAULT clock_timestamp())`, slTable(i)))
		if err != nil {
			return fmt.Errorf("create %s: %w", slTable(i), err)
		}
	}
	return nil
}

// slDrop drops n baseline tables; their dead rows must not reach later windows.
func (b *baseliner) slDrop(ctx context.Context, n int) {
	for i := range n {
		_, _ = b.pool.Exec(ctx, "DROP TABLE IF EXISTS "+slTable(i))
	}
}

// slCounts records how often each id of one table was deleted, to verify exactly-once.
type slCounts struct {
	mu sync.Mutex
	n  []uint8
}

func (c *slCounts) add(ids []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		for int64(len(c.n)) <= id {
			c.n = append(c.n, 0)
		}
		if c.n[id] < 255 {
			c.n[id]++
		}
	}
}

// check reports whether every id of 1..inserted was deleted exactly once and nothing else was.
func (c *slCounts) check(inserted int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing, dup, extra int64
	for id := int64(1); id < max(int64(len(c.n)), inserted+1); id++ {
		var k uint8
		if id < int64(len(c.n)) {
			k = c.n[id]
		}
		switch {
		case id > inserted && k > 0:
			extra++
		case id <= inserted && k == 0:
			missing++
		case k > 1:
			dup += int64(k - 1)
		}
	}
	if missing+dup+extra > 0 {
		return fmt.Errorf("%d missing, %d duplicates, %d unexpected", missing, dup, extra)
	}
	return nil
}

// slConsume runs one transaction of a SKIP LOCKED worker: it locks up to batch rows of table, deletes
// them and returns their ids and creation times. An empty answer means the table had nothing unlocked.
func (b *baseliner) slConsume(ctx context.Context, table string, batch int, ids []int64, created []time.Time) ([]int64, []time.Time, error) {
	ids, created = ids[:0], created[:0]
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows, err := tx.Query(ctx, "SELECT id, payload, created_at FROM "+table+" ORDER BY id FOR UPDATE SKIP LOCKED LIMIT $1", batch)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var id int64
		var payload []byte
		var at time.Time
		if err := rows.Scan(&id, &payload, &at); err != nil {
			rows.Close()
			return nil, nil, err
		}
		ids, created = append(ids, id), append(created, at)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(ids) == 0 {
		return ids, created, tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE id = ANY($1)", ids); err != nil {
		return nil, nil, err
	}
	return ids, created, tx.Commit(ctx)
}

// slInsert inserts n rows of payload into each of tables in one transaction (a fan-out writes one row
// per subscriber's table) and returns when it committed.
func (b *baseliner) slInsert(ctx context.Context, tables []string, n int, payload string) error {
	batch := &pgx.Batch{}
	for _, t := range tables {
		batch.Queue("INSERT INTO "+t+" (payload) SELECT $1::jsonb FROM generate_series(1, $2)", payload, n)
	}
	// One extended-protocol batch ends with one Sync: its statements commit together.
	return b.pool.SendBatch(ctx, batch).Close()
}

// slWorkers runs workers consuming table with batch-row transactions until stop is closed (or, with
// untilEmpty, until a transaction finds nothing); ids go to counts, latencies to st (pop = the
// consuming transaction, e2e = row creation to commit of its delete), deliveries to st.consumed.
func (b *baseliner) slWorkers(ctx context.Context, g *group, workers int, table string, batch int, counts *slCounts, st *scenarioStats, stop <-chan struct{}, untilEmpty bool, idle time.Duration) {
	for range workers {
		g.go_(func() {
			var ids []int64
			var created []time.Time
			for !stopped(stop) && ctx.Err() == nil {
				t := time.Now()
				var err error
				ids, created, err = b.slConsume(ctx, table, batch, ids, created)
				if err != nil {
					if ctx.Err() == nil {
						st.fail("skip-locked consume", err)
						time.Sleep(20 * time.Millisecond)
					}
					continue
				}
				if len(ids) == 0 {
					if untilEmpty {
						return
					}
					time.Sleep(idle)
					continue
				}
				end := time.Now()
				st.pop.Add(end.Sub(t))
				for _, c := range created {
					st.e2e.Add(end.Sub(c))
				}
				st.consumed.Add(int64(len(ids)))
				counts.add(ids)
			}
		})
	}
}

// runSkipLockedQueue is the pop-ack baseline: a table pre-filled with prefill rows, workers consuming
// batch rows per transaction for d or until it is empty; then the rest is drained for the verification.
func (b *baseliner) runSkipLockedQueue(ctx context.Context, workers, batch, prefill, msgSize int, d time.Duration) (*SkipLockedResult, error) {
	if err := b.slCreate(ctx, 1); err != nil {
		return nil, err
	}
	defer b.slDrop(context.WithoutCancel(ctx), 1)
	if _, err := b.pool.Exec(ctx, "INSERT INTO "+slTable(0)+" (payload) SELECT $1::jsonb FROM generate_series(1, $2)", string(payloadOf(msgSize)), prefill); err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	if _, err := b.pool.Exec(ctx, "VACUUM ANALYZE "+slTable(0)); err != nil {
		return nil, err
	}
	st, counts := newStats(), &slCounts{}
	stop := make(chan struct{})
	var g group
	start := time.Now()
	b.slWorkers(ctx, &g, workers, slTable(0), batch, counts, st, stop, true, 0)
	timer := time.AfterFunc(d, func() { close(stop) })
	g.wait()
	timer.Stop()
	el := time.Since(start)
	res := &SkipLockedResult{Tables: 1, Workers: workers, Batch: batch, Seconds: round1(el.Seconds()), Rows: st.consumed.Load(),
		Rate: float64(st.consumed.Load()) / el.Seconds(), Latency: st.pop.Summary()}
	// Drain what the window left, for the verification.
	var dg group
	b.slWorkers(ctx, &dg, workers, slTable(0), 1000, counts, newStats(), nil, true, 0)
	dg.wait()
	res.verify(st, []*slCounts{counts}, []int64{int64(prefill)})
	return res, nil
}

// runSkipLockedFanout is the fanout baseline: tables tables (one per group), producers inserting batch
// rows into every table per transaction as fast as they go, workers per table consuming popBatch rows per
// transaction, for d; the rest is drained for the verification. Rows is deliveries over all tables.
func (b *baseliner) runSkipLockedFanout(ctx context.Context, tables, producers, workers, batch, popBatch, msgSize int, d time.Duration) (*SkipLockedResult, error) {
	if err := b.slCreate(ctx, tables); err != nil {
		return nil, err
	}
	defer b.slDrop(context.WithoutCancel(ctx), tables)
	names := make([]string, tables)
	counts := make([]*slCounts, tables)
	for i := range names {
		names[i], counts[i] = slTable(i), &slCounts{}
	}
	payload := string(payloadOf(msgSize))
	st := newStats()
	var inserted atomic.Int64
	stop := make(chan struct{})
	var pg, cg group
	start := time.Now()
	for range producers {
		pg.go_(func() {
			for !stopped(stop) && ctx.Err() == nil {
				t := time.Now()
				if err := b.slInsert(ctx, names, batch, payload); err != nil {
					if ctx.Err() == nil {
						st.fail("skip-locked insert", err)
					}
					continue
				}
				st.push.Add(time.Since(t))
				inserted.Add(int64(batch))
			}
		})
	}
	for i, t := range names {
		b.slWorkers(ctx, &cg, workers, t, popBatch, counts[i], st, stop, false, 5*time.Millisecond)
	}
	time.Sleep(d)
	el := time.Since(start)
	consumed := st.consumed.Load()
	close(stop)
	pg.wait()
	cg.wait()
	res := &SkipLockedResult{Tables: tables, Workers: workers, Producers: producers, Batch: popBatch, Seconds: round1(el.Seconds()),
		Rows: consumed, Inserted: inserted.Load() * int64(tables), Rate: float64(consumed) / el.Seconds(), Latency: st.pop.Summary()}
	var dg group
	for i, t := range names {
		b.slWorkers(ctx, &dg, 1, t, 1000, counts[i], newStats(), nil, true, 0)
	}
	dg.wait()
	want := make([]int64, tables)
	for i := range want {
		want[i] = inserted.Load() // every transaction wrote batch rows into each table
	}
	res.verify(st, counts, want)
	return res, nil
}

// verify checks every table's deletions against the rows inserted into it, and that no transaction
// failed (a failed insert may have committed or not; the check would then be in doubt).
func (s *SkipLockedResult) verify(st *scenarioStats, counts []*slCounts, inserted []int64) {
	var errs []error
	for k, v := range st.errorCounts() {
		errs = append(errs, fmt.Errorf("%d× %s", v, k))
	}
	for i, c := range counts {
		if err := c.check(inserted[i]); err != nil {
			errs = append(errs, fmt.Errorf("table %d: %w", i, err))
		}
	}
	s.Verified = len(errs) == 0
	if err := errors.Join(errs...); err != nil {
		s.Problem = err.Error()
	}
}

// skipLocked attaches the SKIP LOCKED baseline to a pop-ack or fanout result (-skip-locked): groups 0
// is pop-ack's (one pre-filled table), else fanout's (one table per group).
func (r *runner) skipLocked(ctx context.Context, res *Result, groups int) {
	if !r.opt.skipLocked || r.db == nil {
		return
	}
	r.checkpoint(ctx)
	// A pool of its own, with a connection per worker and producer: sharing the INSERT baseline's
	// (one per producer) would make the workers queue for connections.
	db, err := r.db.withConns(ctx, r.opt.producers+max(r.opt.consumers, groups*r.opt.groupConsumers)+1)
	if err != nil {
		res.Notes = append(res.Notes, "SKIP LOCKED baseline failed: "+err.Error())
		return
	}
	defer db.pool.Close()
	var sl *SkipLockedResult
	if groups == 0 {
		sl, err = db.runSkipLockedQueue(ctx, r.opt.consumers, r.opt.popBatch, r.opt.prefill, r.opt.msgSize, r.opt.duration)
	} else {
		sl, err = db.runSkipLockedFanout(ctx, groups, r.opt.producers, r.opt.groupConsumers, r.opt.concBatch, r.opt.popBatch, r.opt.msgSize, r.opt.duration)
	}
	if err != nil {
		res.Notes = append(res.Notes, "SKIP LOCKED baseline failed: "+err.Error())
		return
	}
	sl.Ratio = round2(ratio(res.ConsumeRate, sl.Rate))
	res.SkipLocked = sl
	if !sl.Verified {
		res.Notes = append(res.Notes, "SKIP LOCKED baseline verification FAILED: "+sl.Problem)
	}
	r.vacuumDatabase(ctx)
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

// withConns is b on a new pool of conns connections (the caller closes it).
func (b *baseliner) withConns(ctx context.Context, conns int) (*baseliner, error) {
	pool, err := newPool(ctx, b.url, conns, "")
	if err != nil {
		return nil, err
	}
	return &baseliner{pool: pool, schema: b.schema, url: b.url}, nil
}
