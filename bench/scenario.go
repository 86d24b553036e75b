package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Result is everything measured for one scenario (also the -json record).
type Result struct {
	Name           string            `json:"name"`
	Skipped        string            `json:"skipped,omitempty"`
	Setup          string            `json:"setup"`
	Seconds        float64           `json:"seconds"`
	Pushed         int64             `json:"pushed"`
	Consumed       int64             `json:"consumed"`
	PushRate       float64           `json:"push_msgs_per_s"`
	ConsumeRate    float64           `json:"consume_msgs_per_s"`
	Push           Summary           `json:"push_latency"`
	Pop            Summary           `json:"pop_latency"`
	Ack            Summary           `json:"ack_latency"`
	Tx             Summary           `json:"transaction_latency"`
	PopToAck       Summary           `json:"pop_to_ack_latency"`
	E2E            Summary           `json:"push_to_ack_latency"`
	Errors         map[string]int    `json:"errors"`
	MaxRSSMB       float64           `json:"broker_max_rss_mb"`
	CPU            CPUShare          `json:"cpu_percent_of_one_core"`
	Verify         []Verification    `json:"verify"`
	Baseline       *BaselineResult   `json:"baseline,omitempty"`
	SkipLocked     *SkipLockedResult `json:"skip_locked_baseline,omitempty"`
	Xmin           *XminReport       `json:"xmin_hold,omitempty"`
	XminSkipLocked *XminSkipLocked   `json:"xmin_hold_skip_locked,omitempty"`
	Windows        []SoakWindow      `json:"soak_windows,omitempty"`
	Requests       int64             `json:"http_requests,omitempty"` // sent in the window (-via-proxy: the proxy's CPU per request)
	Notes          []string          `json:"notes,omitempty"`
	Profile        string            `json:"cpu_profile,omitempty"`
	TopSQL         []StatementStat   `json:"top_statements,omitempty"`
	SQLTotals      *StatementTotals  `json:"statement_totals,omitempty"`
	Relations      []RelationIO      `json:"top_relations,omitempty"`
	Target         string            `json:"-"` // the Report's
	stats          []*scenarioStats  // merged into the fields above by finish
}

// CPUShare is CPU used during the measured window, in percent of one core (200 = both cores busy).
type CPUShare struct {
	Broker   float64 `json:"broker"`
	Postgres float64 `json:"postgres"`
	Harness  float64 `json:"harness"`
	Proxy    float64 `json:"proxy,omitempty"` // -via-proxy
	Other    float64 `json:"other_processes"` // host busy time not used by the three above: noise
}

// Failed reports whether exactly-once verification failed.
func (r *Result) Failed() bool {
	for _, v := range r.Verify {
		if !v.OK {
			return true
		}
	}
	return r.SkipLocked != nil && !r.SkipLocked.Verified || r.XminSkipLocked != nil && !r.XminSkipLocked.Verified
}

type runner struct {
	opt      options
	prod     *client // producers' transport
	cons     *client // consumers' transport
	tag      string  // makes queue names and transactionIds unique per run
	rss      *rssSampler
	cpu      cpuProbe
	baseline *baseliner // nil without a PostgreSQL URL or with -baseline=false
	db       *baseliner // the broker's PostgreSQL, nil without a URL
	pgStats  bool       // pg_stat_statements is available on db
	// stmtTotals: the last window's sums over all statements (set by topStatements)
	stmtTotals   StatementTotals
	pprofURL     string // the broker's pprof listener, "" when unknown
	label        string // target label
	noCheckpoint bool   // a CHECKPOINT failed: no more are tried
	// peers are the runners of the run's other targets (-compare): their databases are checkpointed
	// before this runner's windows too (see checkpoint).
	peers []*runner
	out   io.Writer
}

func (r *runner) queue(name string) string { return "bench-" + r.tag + "-" + name }

func (r *runner) partitionNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p%06d", i)
	}
	return names
}

func roundRobin(names []string) func(*rand.Rand) string {
	var ctr atomic.Uint64
	return func(*rand.Rand) string { return names[(ctr.Add(1)-1)%uint64(len(names))] }
}

func randomPick(names []string) func(*rand.Rand) string {
	return func(rng *rand.Rand) string { return names[rng.IntN(len(names))] }
}

func (r *runner) producers(st *scenarioStats, tr *tracker, queue string, batch int, pick func(*rand.Rand) string, budget *atomic.Int64, backlog int, scen string) []producer {
	ps := make([]producer, r.opt.producers)
	for i := range ps {
		ps[i] = producer{cl: r.loopClient(r.prod), st: st, tr: tr, queue: queue, batch: batch, payload: payloadOf(r.opt.msgSize),
			pick: pick, budget: budget, backlog: backlog, prefix: fmt.Sprintf("%s-%s-%d", r.tag, scen, i)}
	}
	return ps
}

func (r *runner) consumers(n int, st *scenarioStats, tr *tracker, queue, group string, batch int) []consumer {
	cs := make([]consumer, n)
	for i := range cs {
		cl := r.loopClient(r.cons)
		cs[i] = consumer{cl: cl, st: st, tr: tr, queue: queue, group: group, batch: batch, parts: 1, wait: r.opt.popWait,
			handle: ackAll(cl, st, group)}
	}
	return cs
}

// queueConsumers starts -consumers consumers of q in queue mode (pop batch -pop-batch, then ack) recording
// into st and tr. They run in cg until stop is closed; cctx is their context, for consumers added later.
func (r *runner) queueConsumers(ctx context.Context, st *scenarioStats, tr *tracker, q string) (stop chan struct{}, cctx context.Context, cg *group) {
	stop = make(chan struct{})
	cctx = consumerCtx(ctx, stop)
	cg = new(group)
	for _, c := range r.consumers(r.opt.consumers, st, tr, q, "", r.opt.popBatch) {
		cg.go_(func() { c.run(cctx, stop) })
	}
	return stop, cctx, cg
}

// loopClient is the client one producer or consumer loop sends with: with -affinity, pinned to one of
// the brokers (the next in turn), else the role's client, which sends each request to the next broker.
func (r *runner) loopClient(role *client) *client {
	if r.opt.affinity {
		return role.pinned()
	}
	return role
}

// consumerConns gives the consumer role a connection per consumer loop while a scenario runs more loops
// than -conns, as separate consumers have. A parked pop holds its connection for up to -pop-wait, and
// loops sharing fewer connections wait for the parked ones: in the soak (24 loops on 16) the groups'
// pops took 250 ms at p95, and the harness, not the broker, set their rate. restore puts the role's
// client back.
func (r *runner) consumerConns(loops int) (restore func()) {
	if loops <= r.opt.conns {
		return func() {}
	}
	prev := r.cons
	r.cons = prev.withConns(loops)
	return func() { r.cons.close(); r.cons = prev }
}

// window runs producers and consumers; it ends after the scenario duration or, with untilDrained, as soon
// as every tracker's backlog is zero. Producers are stopped at its end, consumers are left running (the
// caller drains and stops them). It returns the measured window's length and fills res's counters.
func (r *runner) window(ctx context.Context, res *Result, st *scenarioStats, ps []producer, cs []consumer, trs []*tracker, untilDrained bool, consStop chan struct{}) (*group, time.Duration) {
	cctx := consumerCtx(ctx, consStop)
	prodStop := make(chan struct{})
	var pg, cg group
	r.checkpoint(ctx)
	prof := r.startProfile(ctx, res.Name)
	r.resetStatements(ctx)
	rel0 := r.relationSnapshot(ctx)
	cpu0 := r.cpu.read()
	req0 := requestsSent.Load()
	start := time.Now()
	for _, p := range ps {
		pg.go_(func() { p.run(ctx, prodStop) })
	}
	for _, c := range cs {
		cg.go_(func() { c.run(cctx, consStop) })
	}
	deadline := time.After(r.opt.duration)
	tick := time.NewTicker(20 * time.Millisecond)
wait:
	for {
		select {
		case <-deadline:
			break wait
		case <-ctx.Done():
			break wait
		case <-tick.C:
			if untilDrained && drained(trs) {
				break wait
			}
		}
	}
	tick.Stop()
	elapsed := time.Since(start)
	pushed, consumed := st.pushed.Load(), st.consumed.Load()
	cpu := r.cpu.read().sub(cpu0)
	res.Requests = requestsSent.Load() - req0
	close(prodStop)
	r.stmtTotals = StatementTotals{}
	res.TopSQL = r.topStatements(ctx)
	res.Relations = r.relationIO(ctx, rel0)
	if t := r.stmtTotals; t.Calls > 0 && pushed+consumed > 0 {
		res.SQLTotals = &t
		n := float64(pushed + consumed)
		fmt.Fprintf(r.out, "all statements: %d calls, %d blocks, %.1f MB WAL; per message pushed or consumed: %.2f statements, %.1f blocks, %.0f WAL bytes\n",
			t.Calls, t.Blocks, float64(t.WALBytes)/1e6, float64(t.Calls)/n, float64(t.Blocks)/n, float64(t.WALBytes)/n)
	}
	res.Profile = prof.wait()
	pg.wait()
	res.Seconds = elapsed.Seconds()
	res.Pushed, res.Consumed = pushed, consumed
	res.PushRate = float64(pushed) / elapsed.Seconds()
	res.ConsumeRate = float64(consumed) / elapsed.Seconds()
	res.CPU = cpuShare(cpu, elapsed.Seconds())
	return &cg, elapsed
}

// consumerCtx is ctx cancelled once stop is closed, so parked long-polls end as soon as the drain is over
// (nothing they could still receive was pushed).
func consumerCtx(ctx context.Context, stop <-chan struct{}) context.Context {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	return cctx
}

func drained(trs []*tracker) bool {
	for _, t := range trs {
		if t.backlog() > 0 {
			return false
		}
	}
	return true
}

// drain keeps the running consumers going until every tracker is drained, nothing progresses for
// -drain-idle, or -drain-timeout passes; then stops them and waits for them.
func (r *runner) drain(ctx context.Context, trs []*tracker, cg *group, stop chan struct{}, res *Result) {
	start := time.Now()
	last, lastChange := -1, time.Now()
	var stall time.Duration // the longest stretch without progress
	for !drained(trs) && ctx.Err() == nil {
		b := 0
		for _, t := range trs {
			b += t.backlog()
		}
		if b != last {
			last, lastChange = b, time.Now()
		}
		stall = max(stall, time.Since(lastChange))
		if time.Since(lastChange) > r.opt.drainIdle || time.Since(start) > r.opt.drainTimeout {
			res.Notes = append(res.Notes, fmt.Sprintf("drain gave up with %d messages unconsumed after %v", b, time.Since(start).Round(time.Second)))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	cg.wait()
	if d := time.Since(start); d > time.Second {
		res.Notes = append(res.Notes, fmt.Sprintf("drain took %v", d.Round(100*time.Millisecond)))
		// A long drain alone says nothing (a large backlog takes its time); a stretch without progress
		// near the lease time is what a lease left by an unanswered pop looks like.
		if stall >= r.opt.lease/2 && drained(trs) {
			res.Notes = append(res.Notes, fmt.Sprintf("drain made no progress for %v (leaseTime %v): messages likely waited for a lease to expire (leased by a pop whose answer never reached a consumer)", stall.Round(100*time.Millisecond), r.opt.lease))
		}
	}
}

// finish merges recorded stats into res and verifies the trackers.
func (r *runner) finish(res *Result, trs map[string]*tracker) {
	res.Errors = map[string]int{}
	for i, st := range res.stats {
		if i == 0 {
			res.Push, res.Pop, res.Ack, res.Tx = st.push.Summary(), st.pop.Summary(), st.ack.Summary(), st.tx.Summary()
			res.PopToAck, res.E2E = st.popToAck.Summary(), st.e2e.Summary()
		}
		for k, v := range st.errorCounts() {
			if i > 0 {
				// The latencies reported are the window's (stats[0]); an error of another phase (a
				// prefill, a separate drain) must not be read against them.
				k = "untimed phase: " + k
			}
			res.Errors[k] += v
		}
	}
	for q, t := range trs {
		res.Verify = append(res.Verify, t.verify(q))
		if !r.opt.keep {
			// Each scenario measures its own queue, not what earlier ones left behind (the broker's
			// statistics job, for one, reads every partition). Best effort: not every broker has the route.
			_ = r.prod.deleteQueue(context.Background(), q)
		}
	}
	if r.opt.vacuumBetween && !r.opt.keep {
		r.vacuumDatabase(context.Background())
	}
	res.MaxRSSMB = round1(float64(r.rss.reset()) / (1 << 20))
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// start begins a scenario: fresh RSS maximum, a configured queue per name.
func (r *runner) start(ctx context.Context, name string, queues ...string) (*Result, error) {
	fmt.Fprintf(r.out, "\n== %s ==\n", name)
	r.rss.reset()
	for _, q := range queues {
		if err := r.prod.configure(ctx, q, int(r.opt.lease/time.Second)); err != nil {
			return nil, fmt.Errorf("configure %s: %w", q, err)
		}
	}
	return &Result{Name: name}, nil
}

// runPush: producers push batches of size batch to 10 partitions (one partition per request, round
// robin); afterwards consumers drain the queue to verify what was pushed.
func (r *runner) runPush(ctx context.Context, batch int) (*Result, error) {
	name := fmt.Sprintf("push-b%d", batch)
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	res.Setup = fmt.Sprintf("%d producers, batch %d, %d partitions (one per request, round robin), %d-byte payload, %d conns", r.opt.producers, batch, r.opt.partitions, r.opt.msgSize, r.opt.conns)
	st, tr := newStats(), newTracker("")
	res.stats = []*scenarioStats{st}
	ps := r.producers(st, tr, q, batch, roundRobin(r.partitionNames(r.opt.partitions)), nil, 0, name)
	stop := make(chan struct{})
	cg, _ := r.window(ctx, res, st, ps, nil, nil, false, stop)
	if r.opt.verifyPush {
		dst := newStats() // drain latencies are not part of the push scenario
		res.stats = append(res.stats, dst)
		cctx := consumerCtx(ctx, stop)
		for _, c := range r.consumers(r.opt.consumers, dst, tr, q, "", r.opt.drainBatch) {
			cg.go_(func() { c.run(cctx, stop) })
		}
		r.drain(ctx, []*tracker{tr}, cg, stop, res)
		r.finish(res, map[string]*tracker{q: tr})
	} else {
		close(stop)
		r.finish(res, nil)
		res.Notes = append(res.Notes, "not verified (-verify-push=false)")
	}
	if r.baseline != nil {
		r.checkpoint(ctx)
		b, err := r.baseline.run(ctx, batch, r.opt.producers, r.opt.partitions, r.opt.msgSize, r.opt.baselineDuration, r.cpu.postgresPID)
		if err != nil {
			res.Notes = append(res.Notes, "baseline failed: "+err.Error())
		} else {
			b.Fraction = round1(100*res.PushRate/b.Rate) / 100
			res.Baseline = b
		}
	}
	return res, nil
}

// prefill pushes n messages with batch-100 requests spread over names (untimed).
func (r *runner) prefill(ctx context.Context, res *Result, tr *tracker, q string, n int, pick func(*rand.Rand) string, scen string) {
	st := newStats()
	res.stats = append(res.stats, st)
	var budget atomic.Int64
	budget.Store(int64(n))
	start := time.Now()
	var g group
	for _, p := range r.producers(st, tr, q, 100, pick, &budget, 0, scen+"-fill") {
		g.go_(func() { p.run(ctx, make(chan struct{})) })
	}
	g.wait()
	d := time.Since(start)
	res.Notes = append(res.Notes, fmt.Sprintf("prefilled %d messages in %v (%.0f msg/s, batch 100)", st.pushed.Load(), d.Round(100*time.Millisecond), float64(st.pushed.Load())/d.Seconds()))
}

// runPopAck: a pre-filled queue, consumers pop with wait=true and ack each pop with /ack/batch. The window
// ends after the duration or when the queue is empty.
func (r *runner) runPopAck(ctx context.Context) (*Result, error) {
	name := "pop-ack"
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	res.Setup = fmt.Sprintf("%d consumers, pop batch %d wait=true, ack/batch, queue mode, %d partitions pre-filled with %d messages", r.opt.consumers, r.opt.popBatch, r.opt.partitions, r.opt.prefill)
	st, tr := newStats(), newTracker("")
	res.stats = []*scenarioStats{st}
	r.prefill(ctx, res, tr, q, r.opt.prefill, roundRobin(r.partitionNames(r.opt.partitions)), name)
	stop := make(chan struct{})
	cg, _ := r.window(ctx, res, st, nil, r.consumers(r.opt.consumers, st, tr, q, "", r.opt.popBatch), []*tracker{tr}, true, stop)
	r.drain(ctx, []*tracker{tr}, cg, stop, res)
	r.finish(res, map[string]*tracker{q: tr})
	res.Pushed, res.PushRate = 0, 0
	r.skipLocked(ctx, res, 0)
	return res, nil
}

// runFanout: producers push as fast as they can while every one of ngroups consumer groups consumes
// everything. Unlike the other concurrent scenarios the producers are not paused by consumer lag: the
// question is what N subscribed, consuming groups cost the push path, and how many deliveries the groups
// get through in the same window (docs/performance.md, "fanout"). The backlog left at the end of the
// window is drained untimed, with larger pops, for the exactly-once verification.
func (r *runner) runFanout(ctx context.Context, ngroups int) (*Result, error) {
	name := fmt.Sprintf("fanout-g%d", ngroups)
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	groups := make([]string, ngroups)
	for i := range groups {
		groups[i] = fmt.Sprintf("g%02d", i)
	}
	res.Setup = fmt.Sprintf("%d producers batch %d (not paused by lag), %d groups x %d consumers (pop batch %d), %d partitions; drain pop batch %d", r.opt.producers, r.opt.concBatch, ngroups, r.opt.groupConsumers, r.opt.popBatch, r.opt.partitions, r.opt.drainBatch*r.opt.partitions)
	st, tr := newStats(), newTracker(groups...)
	res.stats = []*scenarioStats{st}
	ps := r.producers(st, tr, q, r.opt.concBatch, roundRobin(r.partitionNames(r.opt.partitions)), nil, 0, name)
	windowEnd := make(chan struct{})
	defer r.consumerConns(ngroups * r.opt.groupConsumers)()
	var cs []consumer
	for _, g := range groups {
		for _, c := range r.consumers(r.opt.groupConsumers, st, tr, q, g, r.opt.popBatch) {
			c.until = windowEnd // leave after the request in flight: a cancelled pop would strand a lease
			cs = append(cs, c)
		}
	}
	stop := make(chan struct{})
	cg, _ := r.window(ctx, res, st, ps, cs, []*tracker{tr}, false, stop)
	close(windowEnd)
	dst := newStats() // the drain is not part of the measurement
	res.stats = append(res.stats, dst)
	cctx := consumerCtx(ctx, stop)
	for _, g := range groups {
		for _, c := range r.consumers(1, dst, tr, q, g, r.opt.drainBatch*r.opt.partitions) {
			c.parts = r.opt.partitions
			cg.go_(func() { c.run(cctx, stop) })
		}
	}
	r.drain(ctx, []*tracker{tr}, cg, stop, res)
	r.finish(res, map[string]*tracker{q: tr})
	r.skipLocked(ctx, res, ngroups)
	return res, nil
}

// runPartitions: n partitions (one message each pre-pushed), then producers push to random
// partitions while consumers pop wildcard.
func (r *runner) runPartitions(ctx context.Context, n int) (*Result, error) {
	name := fmt.Sprintf("partitions-%d", n)
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	names := r.partitionNames(n)
	res.Setup = fmt.Sprintf("%d partitions; %d producers batch %d to a random partition, %d consumers pop batch %d, backlog cap %d", len(names), r.opt.producers, r.opt.concBatch, r.opt.consumers, r.opt.popBatch, r.opt.backlog)
	st, tr := newStats(), newTracker("")
	res.stats = []*scenarioStats{st}
	// One message per partition first, consumed before the window with multi-partition pops, so the
	// window runs with every partition existing (and empty).
	var idx atomic.Int64
	r.prefillSpread(ctx, res, tr, q, names, &idx)
	pre := newStats()
	res.stats = append(res.stats, pre)
	preStop := make(chan struct{})
	var pg group
	pctx := consumerCtx(ctx, preStop)
	preStart := time.Now()
	for _, c := range r.consumers(r.opt.consumers, pre, tr, q, "", 100) {
		c.parts = 100
		pg.go_(func() { c.run(pctx, preStop) })
	}
	r.drain(ctx, []*tracker{tr}, &pg, preStop, res)
	res.Notes = append(res.Notes, fmt.Sprintf("consumed them with pop batch=100&partitions=100 in %v", time.Since(preStart).Round(100*time.Millisecond)))
	ps := r.producers(st, tr, q, r.opt.concBatch, randomPick(names), nil, r.opt.backlog, name)
	stop := make(chan struct{})
	cg, _ := r.window(ctx, res, st, ps, r.consumers(r.opt.consumers, st, tr, q, "", r.opt.popBatch), []*tracker{tr}, false, stop)
	r.drain(ctx, []*tracker{tr}, cg, stop, res)
	r.finish(res, map[string]*tracker{q: tr})
	return res, nil
}

// prefillSpread pushes one message to each partition, 100 partitions per request.
func (r *runner) prefillSpread(ctx context.Context, res *Result, tr *tracker, q string, names []string, idx *atomic.Int64) {
	st := newStats()
	res.stats = append(res.stats, st)
	start := time.Now()
	var g group
	for w := range r.opt.producers {
		g.go_(func() {
			for {
				from := int(idx.Add(100)) - 100
				if from >= len(names) {
					return
				}
				var items []pushItem
				for i := from; i < min(from+100, len(names)); i++ {
					items = append(items, pushItem{Queue: q, Partition: names[i], Payload: payloadOf(r.opt.msgSize), TransactionID: fmt.Sprintf("%s-spread-%d-%d", r.tag, w, i)})
				}
				sent := time.Now()
				out, err := r.prod.push(ctx, items)
				if err != nil {
					st.fail("push", err)
					continue
				}
				for i, o := range out {
					if o.Status == "queued" {
						tr.pushed(sent, items[i].TransactionID)
					} else {
						st.fail("push", fmt.Errorf("status %q", o.Status))
					}
				}
			}
		})
	}
	g.wait()
	res.Notes = append(res.Notes, fmt.Sprintf("created %d partitions (one message each) in %v", len(names), time.Since(start).Round(100*time.Millisecond)))
}

// runPipeline: producers push to q1; stage consumers pop q1 and, per pop, POST one transaction acking the
// inputs and pushing them to q2; sink consumers pop and ack q2. The rate is messages moved q1 -> q2.
func (r *runner) runPipeline(ctx context.Context) (*Result, error) {
	name := "pipeline"
	ok, err := r.prod.hasTransactionRoute(ctx)
	if err != nil {
		return nil, fmt.Errorf("probe /api/v1/transaction: %w", err)
	}
	if !ok {
		fmt.Fprintf(r.out, "\n== %s ==\nskipped: route missing (POST /api/v1/transaction answers 404)\n", name)
		return &Result{Name: name, Skipped: "route missing"}, nil
	}
	q1, q2 := r.queue("pipe-in"), r.queue("pipe-out")
	res, err := r.start(ctx, name, q1, q2)
	if err != nil {
		return nil, err
	}
	stageN, sinkN := max(1, r.opt.consumers/2), max(1, r.opt.consumers-r.opt.consumers/2)
	res.Setup = fmt.Sprintf("%d producers batch %d -> q1; %d stage consumers pop batch %d + 1 transaction (acks + push to q2) per pop; %d sink consumers ack q2; backlog cap %d", r.opt.producers, r.opt.concBatch, stageN, r.opt.popBatch, sinkN, r.opt.backlog)
	st, sinkSt := newStats(), newStats()
	res.stats = []*scenarioStats{st, sinkSt}
	tr1, tr2 := newTracker(""), newTracker("")
	ps := r.producers(st, tr1, q1, r.opt.concBatch, roundRobin(r.partitionNames(r.opt.partitions)), nil, r.opt.backlog, name)
	cs := r.consumers(stageN, st, tr1, q1, "", r.opt.popBatch)
	for i := range cs {
		cs[i].handle = forward(r.cons, st, "", q2, tr2)
	}
	cs = append(cs, r.consumers(sinkN, sinkSt, tr2, q2, "", r.opt.popBatch)...)
	stop := make(chan struct{})
	cg, _ := r.window(ctx, res, st, ps, cs, []*tracker{tr1}, false, stop)
	r.drain(ctx, []*tracker{tr1, tr2}, cg, stop, res)
	r.finish(res, map[string]*tracker{q1: tr1, q2: tr2})
	res.Notes = append(res.Notes, fmt.Sprintf("sink: %d consumed, ack %s ms, transaction->ack(q2) %s ms", sinkSt.consumed.Load(), sinkSt.ack.Summary(), sinkSt.e2e.Summary()))
	return res, nil
}
