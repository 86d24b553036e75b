package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

func init() {
	registerOptionalScenario("soak", "-soak long mixed load (pop+ack queue, fan-out queue, a queue created and deleted every -soak-churn) at -load-fraction of capacity: p99, RSS and database size per -soak-window", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runSoak(ctx))
	})
}

// soakGroups is how many consumer groups read the soak's fan-out queue.
const soakGroups = 2

// soakGroupConsumers is how many consumers each group of the fan-out queue has: a quarter of
// -consumers (or -group-consumers if more): each group takes as many deliveries as the pop+ack queue.
func soakGroupConsumers(o options) int { return max(1, o.consumers/4, o.groupConsumers) }

// SoakWindow is one -soak-window of the soak.
type SoakWindow struct {
	Phase
	RSSMB   float64 `json:"broker_max_rss_mb"`
	DBBytes int64   `json:"schema_table_and_index_bytes"` // every table of the broker's schema, indexes and TOAST included
	Churned int     `json:"queues_created_and_deleted"`
}

// SoakVerdict is what the soak target checks over the windows.
type SoakVerdict struct {
	P99Worst   float64 // the largest push->ack p99 of a window as a multiple of the first window's
	RSSGrowth  float64 // last window's RSS over the RSS where the last two thirds began, minus 1
	SizeGrowth float64 // the same for the schema's size
}

// soakVerdict computes the verdict of ws (in order); zero with fewer than two windows.
func soakVerdict(ws []SoakWindow) SoakVerdict {
	var v SoakVerdict
	if len(ws) < 2 {
		return v
	}
	for _, w := range ws[1:] {
		v.P99Worst = max(v.P99Worst, ratio(w.E2E.P99, ws[0].E2E.P99))
	}
	// The target reads "no growth over the last 40 minutes of an hour": the last two thirds.
	from := ws[len(ws)/3]
	last := ws[len(ws)-1]
	if from.RSSMB > 0 {
		v.RSSGrowth = last.RSSMB/from.RSSMB - 1
	}
	if from.DBBytes > 0 {
		v.SizeGrowth = float64(last.DBBytes)/float64(from.DBBytes) - 1
	}
	return v
}

// schemaBytes is the size of every table of schema, with indexes and TOAST.
func (b *baseliner) schemaBytes(ctx context.Context, schema string) int64 {
	var n int64
	_ = b.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::bigint FROM pg_stat_user_tables WHERE schemaname = $1`, schema).Scan(&n)
	return n
}

// runSoak: a queue consumed in queue mode and a fan-out queue consumed by soakGroups groups, both fed by
// paced producers (half each) at -load-rate or -load-fraction of the capacity measured first; every
// -soak-churn a queue is created, filled, consumed, verified and deleted. Every -soak-window the
// window's rates and latencies, the broker's RSS and the schema's size are printed. At the end both
// queues are drained and verified.
func (r *runner) runSoak(ctx context.Context) (*Result, error) {
	if r.db == nil {
		return nil, fmt.Errorf("soak needs the broker's database (-pg-url with -url)")
	}
	total := r.opt.soak
	if total <= 0 {
		total = time.Hour
	}
	name := "soak"
	qa, qb := r.queue("soak-q"), r.queue("soak-fan")
	res, err := r.start(ctx, name, qa, qb)
	if err != nil {
		return nil, err
	}
	if ret := int(r.opt.soakRetention / time.Second); ret > 0 {
		for _, q := range []string{qa, qb} {
			if err := r.prod.configureOptions(ctx, q, map[string]any{"leaseTime": int(r.opt.lease / time.Second),
				"retentionEnabled": true, "completedRetentionSeconds": ret}); err != nil {
				return nil, fmt.Errorf("configure %s: %w", q, err)
			}
		}
		res.Notes = append(res.Notes, fmt.Sprintf("both queues delete consumed messages after %v (completedRetentionSeconds)", r.opt.soakRetention))
	}
	// Its loops: the queue's consumers, the groups', the churned queue's one and the drain's.
	defer r.consumerConns(r.opt.consumers + soakGroups*soakGroupConsumers(r.opt) + 2 + soakGroups)()
	groups := make([]string, soakGroups)
	for i := range groups {
		groups[i] = fmt.Sprintf("g%d", i)
	}
	st, tra, trb := newStats(), newTracker(""), newTracker(groups...)
	res.stats = []*scenarioStats{st}
	stop, cctx, cg := r.queueConsumers(ctx, st, tra, qa)
	for _, g := range groups {
		for _, c := range r.consumers(soakGroupConsumers(r.opt), st, trb, qb, g, r.opt.popBatch) {
			cg.go_(func() { c.run(cctx, stop) })
		}
	}
	parts := roundRobin(r.partitionNames(r.opt.partitions))
	half := max(1, r.opt.producers/2)
	mix := func(backlog int, scen string) []producer {
		return append(r.producers(st, tra, qa, r.opt.concBatch, parts, nil, backlog, scen+"-a")[:half],
			r.producers(st, trb, qb, r.opt.concBatch, parts, nil, backlog, scen+"-b")[half:]...)
	}
	rate := r.opt.loadRate
	if rate <= 0 {
		// The capacity of the soak's own mix, not of pop+ack alone: a fan-out delivery and a queue-mode
		// one do not cost the same. Unpaced, each half's producers keep up with their own consumers
		// (-backlog), so the halves' shares of the pushes tell each queue's rate apart in the deliveries
		// (D = a + soakGroups*b). The paced mix sends half its pushes to each queue: the slower half
		// bounds it (2 min(a, b)), and sizing by the sum ran that half close to its own capacity.
		a0, b0 := tra.pushedCount(), trb.pushedCount()
		capa := r.unpaced(ctx, st, mix(r.opt.backlog, name+"-cap"))
		da, db := float64(tra.pushedCount()-a0), float64(trb.pushedCount()-b0)
		mixCap := capa.ConsumeRate
		if da > 0 && db > 0 {
			mixCap = 2 * min(da, db) * capa.ConsumeRate / (da + soakGroups*db) // pushes/s the mix sustains
			mixCap *= (1 + soakGroups) / 2.0                                   // in deliveries
		}
		rate = r.opt.loadFraction * mixCap * 2 / (1 + soakGroups)
		res.Notes = append(res.Notes, fmt.Sprintf("capacity (the soak's mix, unpaced, %v): %.0f deliveries/s (%.0f pushes/s, %.0f%% of them to the fan-out queue), %.0f deliveries/s with half the pushes to each queue; pushes offered so that deliveries are %.0f%% of that: %.0f msg/s",
			r.opt.duration, capa.ConsumeRate, capa.PushRate, 100*db/max(1, da+db), mixCap, 100*r.opt.loadFraction, rate))
		// The first window is the one the others are held against: it starts once the consumers have
		// caught up with what the unpaced pushes left, not with that backlog's queueing in its p99.
		waited := time.Now()
		for (tra.backlog() > 0 || trb.backlog() > 0) && time.Since(waited) < r.opt.drainTimeout && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("the consumers caught up with the capacity window's backlog in %.1fs", time.Since(waited).Seconds()))
	}
	res.Setup = fmt.Sprintf("%v: %d producers batch %d paced to %.0f msg/s in all, half to a queue consumed by %d consumers (pop batch %d + ack), half to a queue read by %d groups x %d consumers; a queue created, used and deleted every %v; windows of %v",
		total, r.opt.producers, r.opt.concBatch, rate, r.opt.consumers, r.opt.popBatch, soakGroups, soakGroupConsumers(r.opt), r.opt.soakChurn, r.opt.soakWindow)
	prodStop, pg := runPaced(ctx, mix(0, name), rate)

	churnRes := make(chan Verification, 1024)
	churned := 0
	churnStop := make(chan struct{})
	var chg group
	chg.go_(func() {
		t := time.NewTicker(r.opt.soakChurn)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-churnStop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			churnRes <- r.churnQueue(ctx, fmt.Sprintf("soak-churn-%d", i))
		}
	})

	r.checkpoint(ctx)
	r.rss.reset()
	cpu0 := r.cpu.read()
	req0 := requestsSent.Load()
	start := st.mark()
	prev := start
	deadline := time.Now().Add(total)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(min(r.opt.soakWindow, time.Until(deadline))):
		}
		m := st.mark()
		w := SoakWindow{Phase: st.phase(fmt.Sprintf("%dm", int(m.at.Sub(start.at).Minutes()+0.5)), prev, m),
			RSSMB: round1(float64(r.rss.reset()) / (1 << 20)), DBBytes: r.db.schemaBytes(ctx, r.opt.schema)}
	collect:
		for {
			select {
			case v := <-churnRes:
				w.Churned++
				churned++
				res.Verify = append(res.Verify, v)
			default:
				break collect
			}
		}
		res.Windows = append(res.Windows, w)
		fmt.Fprintf(r.out, "soak %-5s pushed %6.0f/s consumed %6.0f/s | push %s | pop %s | ack %s | push->ack %s ms | RSS %.1f MB | schema %s | %d queues churned\n",
			w.Name, w.PushRate, w.ConsumeRate, w.Push, w.Pop, w.Ack, w.E2E, w.RSSMB, mb(w.DBBytes), w.Churned)
		prev = m
	}
	end := st.mark()
	cpu := r.cpu.read().sub(cpu0)
	res.Requests = requestsSent.Load() - req0
	close(churnStop)
	chg.wait()
	close(churnRes)
	for v := range churnRes {
		churned++
		res.Verify = append(res.Verify, v)
	}
	close(prodStop)
	pg.wait()
	all := phaseRates("all", start, end)
	res.Seconds, res.Pushed, res.Consumed, res.PushRate, res.ConsumeRate = all.Seconds, end.pushed-start.pushed, end.consumed-start.consumed, all.PushRate, all.ConsumeRate
	res.CPU = cpuShare(cpu, all.Seconds)
	v := soakVerdict(res.Windows)
	res.Notes = append(res.Notes, fmt.Sprintf("soak: %d windows, %d queues created and deleted; worst window push->ack p99 %.2fx the first (target <= 1.5) %s; RSS growth over the last two thirds %+.0f%% (target <= 10%%) %s; schema size growth over the last two thirds %+.0f%%",
		len(res.Windows), churned, v.P99Worst, okMark(v.P99Worst <= 1.5), 100*v.RSSGrowth, okMark(v.RSSGrowth <= 0.10), 100*v.SizeGrowth))
	// Larger pops over several partitions finish the backlog sooner, as in fanout's drain.
	dst := newStats()
	res.stats = append(res.stats, dst)
	for _, g := range append([]string{""}, groups...) {
		tr, q := trb, qb
		if g == "" {
			tr, q = tra, qa
		}
		for _, c := range r.consumers(1, dst, tr, q, g, r.opt.drainBatch*r.opt.partitions) {
			c.parts = r.opt.partitions
			cg.go_(func() { c.run(cctx, stop) })
		}
	}
	r.drain(ctx, []*tracker{tra, trb}, cg, stop, res)
	r.finish(res, map[string]*tracker{qa: tra, qb: trb})
	return res, nil
}

// churnQueue creates a queue, pushes 100 messages to it, consumes them, deletes it and returns the
// exactly-once verification of its messages.
func (r *runner) churnQueue(ctx context.Context, name string) Verification {
	q := r.queue(name)
	tr := newTracker("")
	st := newStats()
	v := Verification{Queue: q}
	if err := r.prod.configure(ctx, q, int(r.opt.lease/time.Second)); err != nil {
		v.Sample = []string{"configure: " + err.Error()}
		return v
	}
	var budget atomic.Int64
	budget.Store(100)
	for _, p := range r.producers(st, tr, q, 100, roundRobin(r.partitionNames(r.opt.partitions)), &budget, 0, name)[:1] {
		p.run(ctx, nil)
	}
	stop := make(chan struct{})
	cctx := consumerCtx(ctx, stop)
	var g group
	for _, c := range r.consumers(1, st, tr, q, "", 100) {
		c.parts = r.opt.partitions
		g.go_(func() { c.run(cctx, stop) })
	}
	deadline := time.Now().Add(r.opt.drainTimeout)
	for tr.backlog() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	g.wait()
	v = tr.verify(q)
	if n := st.errorCounts(); len(n) > 0 {
		for k := range n {
			v.Sample = append(v.Sample, k)
		}
	}
	_ = r.prod.deleteQueue(context.WithoutCancel(ctx), q)
	return v
}
