package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

func init() {
	registerOptionalScenario("background", "an idle broker holding -background-partitions partitions: the PostgreSQL time its background work takes per minute", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runBackground(ctx))
	})
}

// runBackground creates -background-partitions partitions (one message each, consumed at once, so
// none has work left), lets the broker settle for -background-settle, then measures over a quiet
// -background-window what PostgreSQL spends while nobody sends a request: the CPU of all its processes
// and, with -pg-stats, the execution time of every statement and the ones that took most of it. All
// of it is background work (statistics, retention, eviction, vacuum and analyze checks, samples):
// the target is that it stays small however many partitions exist.
func (r *runner) runBackground(ctx context.Context) (*Result, error) {
	if r.db == nil {
		return nil, fmt.Errorf("background needs the broker's database (-pg-url with -url)")
	}
	n := r.opt.backgroundPartitions
	name := "background"
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	res.Setup = fmt.Sprintf("%d partitions, each with one message consumed before the window; settle %s, quiet window %s", n, r.opt.backgroundSettle, r.opt.backgroundWindow)
	st, tr := newStats(), newTracker("")
	res.stats = []*scenarioStats{st}
	// Each message to a partition of its own, 500 per request (a producer's request goes to one
	// partition, so the scenarios' prefill would create a hundredth of them).
	parts := r.partitionNames(n)
	s := tr.stream(r.tag + "-" + name + "-fill")
	start := time.Now()
	for i := 0; i < n; i += 500 {
		items := make([]pushItem, 0, 500)
		txids := make([]string, 0, 500)
		for j := i; j < min(n, i+500); j++ {
			txids = append(txids, s.id(j))
			items = append(items, pushItem{Queue: q, Partition: parts[j], Payload: json.RawMessage(`"first"`), TransactionID: txids[len(txids)-1]})
		}
		if _, err := r.prod.push(ctx, items); err != nil {
			return nil, fmt.Errorf("creating the partitions: %w", err)
		}
		tr.pushed(time.Now(), txids...)
	}
	res.Notes = append(res.Notes, fmt.Sprintf("created %d partitions in %v", n, time.Since(start).Round(100*time.Millisecond)))
	stop := make(chan struct{})
	var cg group
	cctx := consumerCtx(ctx, stop)
	for _, c := range r.consumers(r.opt.consumers, st, tr, q, "", 100) {
		c.parts = 100 // one message per partition: a pop takes a hundred of them
		cg.go_(func() { c.run(cctx, stop) })
	}
	r.drain(ctx, []*tracker{tr}, &cg, stop, res)

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(r.opt.backgroundSettle):
	}
	r.resetStatements(ctx)
	elapsed, cpu, err := r.quietWindow(ctx, r.opt.backgroundWindow)
	if err != nil {
		return nil, err
	}
	r.stmtTotals = StatementTotals{}
	res.TopSQL = r.topStatements(ctx)
	res.Seconds = elapsed.Seconds()
	res.CPU = cpuShare(cpu, elapsed.Seconds())
	perMin := func(d float64) float64 { return d * 60 / elapsed.Seconds() }
	note := fmt.Sprintf("background: %d partitions idle; PostgreSQL CPU %.0f ms per minute (all its processes, autovacuum included), broker CPU %.0f ms per minute",
		n, perMin(float64(cpu.Postgres.Milliseconds())), perMin(float64(cpu.Broker.Milliseconds())))
	if r.pgStats {
		t := r.stmtTotals
		res.SQLTotals = &t
		note += fmt.Sprintf("; statements %.1f ms per minute in %d calls (target < 50 ms)", perMin(t.ExecMS), t.Calls)
	} else {
		note += "; -pg-stats adds the statements' own time (the target's measure: < 50 ms per minute)"
	}
	res.Notes = append(res.Notes, note)
	r.finish(res, map[string]*tracker{q: tr})
	return res, nil
}
