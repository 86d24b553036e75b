package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

func init() {
	registerOptionalScenario("delete-then-run", "push and pop+ack on a fresh database, then after a queue of -delete-partitions partitions and -delete-messages messages was deleted and vacuumed: the ratios", func(ctx context.Context, r *runner) ([]*Result, error) {
		return r.runDeleteThenRun(ctx)
	})
}

// runDeleteThenRun measures push (batch -batch) and pop-ack on the fresh database; fills a queue of
// -delete-partitions partitions with -delete-messages messages, deletes it, and either runs VACUUM
// ANALYZE (-delete-vacuum) or waits for autovacuum to have visited every table it left dead rows in;
// then measures push and pop-ack again. Each run verifies its own queue.
func (r *runner) runDeleteThenRun(ctx context.Context) ([]*Result, error) {
	if r.db == nil {
		return nil, fmt.Errorf("delete-then-run needs the broker's database (-pg-url with -url)")
	}
	// The baselines are not what this compares; they would only lengthen the run.
	bl, sl := r.baseline, r.opt.skipLocked
	r.baseline, r.opt.skipLocked = nil, false
	defer func() { r.baseline, r.opt.skipLocked = bl, sl }()

	var out []*Result
	measure := func(suffix string) error {
		p, err := r.runPush(ctx, r.opt.concBatch)
		if p != nil {
			p.Name += suffix
			out = append(out, p)
		}
		if err != nil {
			return err
		}
		c, err := r.runPopAck(ctx)
		if c != nil {
			c.Name += suffix
			out = append(out, c)
		}
		return err
	}
	if err := measure("-fresh"); err != nil {
		return out, err
	}

	q := r.queue("deleted")
	fmt.Fprintf(r.out, "\n== delete-then-run: %d partitions, %d messages, then delete ==\n", r.opt.deletePartitions, r.opt.deleteMessages)
	if err := r.prod.configure(ctx, q, int(r.opt.lease/time.Second)); err != nil {
		return out, err
	}
	batch := max(1, min(100, r.opt.deleteMessages/r.opt.deletePartitions))
	var budget atomic.Int64
	budget.Store(int64(r.opt.deleteMessages))
	st, tr := newStats(), newTracker("")
	start := time.Now()
	var g group
	for _, p := range r.producers(st, tr, q, batch, roundRobin(r.partitionNames(r.opt.deletePartitions)), &budget, 0, "deleted") {
		g.go_(func() { p.run(ctx, make(chan struct{})) })
	}
	g.wait()
	if errs := st.errorCounts(); len(errs) > 0 {
		return out, fmt.Errorf("filling the queue to delete: %v", errs)
	}
	fmt.Fprintf(r.out, "filled %d messages (batch %d) in %v\n", st.pushed.Load(), batch, time.Since(start).Round(100*time.Millisecond))
	deleted := time.Now()
	if err := r.prod.deleteQueue(ctx, q); err != nil {
		return out, fmt.Errorf("delete: %w", err)
	}
	how := fmt.Sprintf("deleted in %v", time.Since(deleted).Round(10*time.Millisecond))
	if r.opt.deleteVacuum {
		t := time.Now()
		if _, err := r.db.pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			return out, err
		}
		how += fmt.Sprintf(", then VACUUM ANALYZE (not autovacuum; -delete-vacuum=false waits for it) in %v", time.Since(t).Round(10*time.Millisecond))
	} else {
		waited, left := r.waitAutovacuum(ctx, deleted)
		how += fmt.Sprintf(", then waited %v for autovacuum (%d tables with dead rows not yet visited)", waited.Round(time.Second), left)
	}
	fmt.Fprintln(r.out, how)
	if err := measure("-after-delete"); err != nil {
		return out, err
	}
	if len(out) == 4 {
		for i := range 2 {
			f, a := out[i], out[i+2]
			p99 := fmt.Sprintf("push p99 %.2fx", ratio(a.Push.P99, f.Push.P99))
			if i == 1 {
				p99 = fmt.Sprintf("pop p99 %.2fx, ack p99 %.2fx", ratio(a.Pop.P99, f.Pop.P99), ratio(a.Ack.P99, f.Ack.P99))
			}
			a.Notes = append(a.Notes, fmt.Sprintf("%d partitions and %d messages %s; vs fresh: rate %.2fx (target >= 0.90), %s",
				r.opt.deletePartitions, r.opt.deleteMessages, how, ratio(headline(a), headline(f)), p99))
		}
	}
	return out, nil
}

// waitAutovacuum waits, up to -delete-wait, until every table of the broker's schema holding more than
// 1000 dead rows was autovacuumed after since; it returns how long it waited and how many were left.
func (r *runner) waitAutovacuum(ctx context.Context, since time.Time) (time.Duration, int) {
	start := time.Now()
	left := -1
	for time.Since(start) < r.opt.deleteWait && ctx.Err() == nil {
		err := r.db.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = $1 AND n_dead_tup > 1000
			AND coalesce(last_autovacuum, 'epoch') < $2`, r.opt.schema, since).Scan(&left)
		if err != nil || left == 0 {
			break
		}
		time.Sleep(5 * time.Second)
	}
	return time.Since(start), left
}
