package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

func init() {
	registerOptionalScenario("xmin-hold", "steady load at -load-fraction of capacity while a REPEATABLE READ transaction holds the xmin horizon for -xmin-hold: rates, p99 and dead rows per message before/during/after, and the same on the SKIP LOCKED baseline", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runXminHold(ctx))
	})
}

// tableStat is one table's row churn and size (pg_stat_user_tables, pg_total_relation_size).
type tableStat struct {
	dead, churn, size int64 // churn: rows updated or deleted so far (each leaves a dead version)
}

// tableStats reads every table of schema.
func (b *baseliner) tableStats(ctx context.Context, schema string) map[string]tableStat {
	rows, err := b.pool.Query(ctx, `SELECT relname, n_dead_tup, n_tup_upd + n_tup_del, pg_total_relation_size(relid)
		FROM pg_stat_user_tables WHERE schemaname = $1`, schema)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[string]tableStat{}
	for rows.Next() {
		var name string
		var t tableStat
		if rows.Scan(&name, &t.dead, &t.churn, &t.size) == nil {
			out[name] = t
		}
	}
	return out
}

// XminReport is what the xmin-hold scenario measured on one queue implementation.
type XminReport struct {
	Phases []Phase `json:"phases"` // before, hold, after
	// DeadPerMessage: row versions made dead (rows updated or deleted) per message consumed while the
	// horizon was held: none of them could be reclaimed until the release.
	DeadPerMessage float64 `json:"dead_rows_per_message_held"`
	// NDeadPerMessage: the growth of n_dead_tup over the hold per message, PostgreSQL's own count of
	// what is left (an estimate: a vacuum in the hold resets it to what it saw).
	NDeadPerMessage float64 `json:"n_dead_tup_growth_per_message_held"`
	// ChurnPerMessage: rows updated or deleted per message consumed before the hold.
	ChurnPerMessage float64     `json:"rows_updated_or_deleted_per_message"`
	Tables          []XminTable `json:"tables"`
	HeldXminAge     int64       `json:"held_xmin_age"` // transactions the horizon lagged at the release
}

// XminTable is one hot table's dead rows and size across the scenario.
type XminTable struct {
	Name         string  `json:"name"`
	DeadHeld     int64   `json:"dead_rows_made_during_hold"` // rows updated or deleted
	NDeadHeld    int64   `json:"n_dead_tup_growth_during_hold"`
	DeadPerMsg   float64 `json:"dead_rows_per_message_held"`
	SizeBefore   int64   `json:"bytes_before"`
	SizeReleased int64   `json:"bytes_at_release"`
	SizeAfter    int64   `json:"bytes_after"`
}

// xminPhases measures a running load recorded in st: -xmin-phase before, -xmin-hold with a REPEATABLE
// READ transaction open on db, -xmin-phase after its release; schema's tables are read at each boundary.
func (r *runner) xminPhases(ctx context.Context, st *scenarioStats, db *baseliner, schema string) (*XminReport, error) {
	sleep := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	var m [4]mark
	var t [4]map[string]tableStat
	m[0], t[0] = st.mark(), db.tableStats(ctx, schema)
	if err := sleep(r.opt.xminPhase); err != nil {
		return nil, err
	}
	m[1], t[1] = st.mark(), db.tableStats(ctx, schema)
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	// The snapshot of a REPEATABLE READ transaction is taken by its first statement and kept to its end:
	// the backend's xmin holds back what VACUUM anywhere in the cluster may remove.
	if _, err := conn.Exec(ctx, `BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM pg_class`); err != nil {
		return nil, fmt.Errorf("hold the horizon: %w", err)
	}
	serr := sleep(r.opt.xminHold)
	rep := &XminReport{}
	_ = db.pool.QueryRow(ctx, `SELECT coalesce(max(age(backend_xmin)), 0) FROM pg_stat_activity WHERE pid = $1`, conn.Conn().PgConn().PID()).Scan(&rep.HeldXminAge)
	m[2], t[2] = st.mark(), db.tableStats(ctx, schema)
	if _, err := conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, serr
	}
	if err := sleep(r.opt.xminPhase); err != nil {
		return nil, err
	}
	m[3], t[3] = st.mark(), db.tableStats(ctx, schema)
	rep.Phases = []Phase{st.phase("before", m[0], m[1]), st.phase("hold", m[1], m[2]), st.phase("after", m[2], m[3])}
	heldMsgs := float64(m[2].consumed - m[1].consumed)
	var dead, ndead, churn int64
	for name, a := range t[2] {
		b := t[1][name]
		x := XminTable{Name: name, DeadHeld: a.churn - b.churn, NDeadHeld: a.dead - b.dead, SizeBefore: t[0][name].size, SizeReleased: a.size, SizeAfter: t[3][name].size}
		x.DeadPerMsg = round2(ratio(float64(x.DeadHeld), heldMsgs))
		dead += x.DeadHeld
		ndead += x.NDeadHeld
		churn += t[1][name].churn - t[0][name].churn
		if x.DeadHeld > 0 || x.SizeAfter > x.SizeBefore {
			rep.Tables = append(rep.Tables, x)
		}
	}
	sort.Slice(rep.Tables, func(i, j int) bool { return rep.Tables[i].DeadHeld > rep.Tables[j].DeadHeld })
	rep.DeadPerMessage = round2(ratio(float64(dead), heldMsgs))
	rep.NDeadPerMessage = round2(ratio(float64(ndead), heldMsgs))
	rep.ChurnPerMessage = round2(ratio(float64(churn), float64(m[1].consumed-m[0].consumed)))
	return rep, nil
}

// capacity runs unpaced producers (capped by -backlog) against the consumers already recording into st
// for -duration, and returns the consume rate measured.
func (r *runner) capacity(ctx context.Context, st *scenarioStats, tr *tracker, q, scen string) float64 {
	ps := r.producers(st, tr, q, r.opt.concBatch, roundRobin(r.partitionNames(r.opt.partitions)), nil, r.opt.backlog, scen+"-cap")
	return r.unpaced(ctx, st, ps).ConsumeRate
}

// unpaced runs ps as fast as they go (each capped by its own -backlog) for -duration after a 2 s
// warm-up, and returns the rates of that window.
func (r *runner) unpaced(ctx context.Context, st *scenarioStats, ps []producer) Phase {
	stop := make(chan struct{})
	var g group
	for _, p := range ps {
		g.go_(func() { p.run(ctx, stop) })
	}
	time.Sleep(2 * time.Second) // warm up: connections, plans
	a := st.mark()
	select {
	case <-ctx.Done():
	case <-time.After(r.opt.duration):
	}
	b := st.mark()
	close(stop)
	g.wait()
	return phaseRates("capacity", a, b)
}

// runXminHold: consumers pop+ack one queue; the capacity is measured (unless -load-rate), then producers
// offer -load-fraction of it while xminPhases runs; the queue is drained and verified. Then the same
// offered rate runs on the SKIP LOCKED baseline table through the same phases.
func (r *runner) runXminHold(ctx context.Context) (*Result, error) {
	if r.db == nil {
		return nil, fmt.Errorf("xmin-hold needs the broker's database (-pg-url with -url)")
	}
	name := "xmin-hold"
	q := r.queue(name)
	res, err := r.start(ctx, name, q)
	if err != nil {
		return nil, err
	}
	st, tr := newStats(), newTracker("")
	res.stats = []*scenarioStats{st}
	stop, _, cg := r.queueConsumers(ctx, st, tr, q)
	rate := r.opt.loadRate
	if rate <= 0 {
		capa := r.capacity(ctx, st, tr, q, name)
		rate = r.opt.loadFraction * capa
		res.Notes = append(res.Notes, fmt.Sprintf("capacity (unpaced, %v): %.0f msg/s consumed; offered load %.0f%% of it = %.0f msg/s", r.opt.duration, capa, 100*r.opt.loadFraction, rate))
	}
	res.Setup = fmt.Sprintf("%d producers batch %d paced to %.0f msg/s over %d partitions, %d consumers pop batch %d + ack; phases: %v before, %v with a REPEATABLE READ transaction open, %v after its release",
		r.opt.producers, r.opt.concBatch, rate, r.opt.partitions, r.opt.consumers, r.opt.popBatch, r.opt.xminPhase, r.opt.xminHold, r.opt.xminPhase)
	prodStop, pg := runPaced(ctx, r.producers(st, tr, q, r.opt.concBatch, roundRobin(r.partitionNames(r.opt.partitions)), nil, 0, name), rate)
	db, err := r.db.withConns(ctx, 4)
	if err != nil {
		return nil, err
	}
	defer db.pool.Close()
	r.checkpoint(ctx)
	cpu0 := r.cpu.read()
	req0 := requestsSent.Load()
	m0 := st.mark()
	ours, err := r.xminPhases(ctx, st, db, r.opt.schema)
	m1 := st.mark()
	cpu := r.cpu.read().sub(cpu0)
	res.Requests = requestsSent.Load() - req0
	close(prodStop)
	pg.wait()
	if err != nil {
		close(stop)
		cg.wait()
		return res, err
	}
	w := phaseRates("all", m0, m1)
	res.Seconds, res.Pushed, res.Consumed, res.PushRate, res.ConsumeRate = w.Seconds, m1.pushed-m0.pushed, m1.consumed-m0.consumed, w.PushRate, w.ConsumeRate
	res.CPU = cpuShare(cpu, w.Seconds)
	res.Xmin = ours
	r.drain(ctx, []*tracker{tr}, cg, stop, res)
	r.finish(res, map[string]*tracker{q: tr})
	res.stats = nil // the latencies of the whole run mean nothing here; the phases carry them

	sl, err := r.xminSkipLocked(ctx, db, rate)
	if err != nil {
		res.Notes = append(res.Notes, "SKIP LOCKED xmin-hold failed: "+err.Error())
	} else {
		res.XminSkipLocked = sl
	}
	res.Notes = append(res.Notes, xminVerdict("queen", ours)...)
	if sl != nil {
		res.Notes = append(res.Notes, xminVerdict("skip-locked", sl.XminReport)...)
	}
	return res, nil
}

// XminSkipLocked is the xmin-hold scenario run on the SKIP LOCKED baseline table.
type XminSkipLocked struct {
	*XminReport
	Verified bool   `json:"verified"`
	Problem  string `json:"problem,omitempty"`
}

// xminSkipLocked offers rate rows/s to one SKIP LOCKED table (the same producers and batch as the
// broker's run, the same number of workers and batch) through the same phases.
func (r *runner) xminSkipLocked(ctx context.Context, db *baseliner, rate float64) (*XminSkipLocked, error) {
	sldb, err := r.db.withConns(ctx, r.opt.producers+r.opt.consumers+1)
	if err != nil {
		return nil, err
	}
	defer sldb.pool.Close()
	if err := sldb.slCreate(ctx, 1); err != nil {
		return nil, err
	}
	defer sldb.slDrop(context.WithoutCancel(ctx), 1)
	r.checkpoint(ctx)
	st, counts := newStats(), &slCounts{}
	stop := make(chan struct{})
	var pg, cg group
	pace := newPacer(rate)
	payload := string(payloadOf(r.opt.msgSize))
	table := []string{slTable(0)}
	for range r.opt.producers {
		pg.go_(func() {
			for !stopped(stop) && pace.wait(ctx, r.opt.concBatch) {
				t := time.Now()
				if err := sldb.slInsert(ctx, table, r.opt.concBatch, payload); err != nil {
					st.fail("skip-locked insert", err)
					continue
				}
				st.push.Add(time.Since(t))
				st.pushed.Add(int64(r.opt.concBatch))
			}
		})
	}
	sldb.slWorkers(ctx, &cg, r.opt.consumers, table[0], r.opt.popBatch, counts, st, stop, false, 5*time.Millisecond)
	rep, err := r.xminPhases(ctx, st, db, "bench_scratch")
	close(stop)
	pg.wait()
	cg.wait()
	if err != nil {
		return nil, err
	}
	var dg group
	sldb.slWorkers(ctx, &dg, 1, table[0], 1000, counts, newStats(), nil, true, 0)
	dg.wait()
	out := &XminSkipLocked{XminReport: rep}
	v := &SkipLockedResult{}
	v.verify(st, []*slCounts{counts}, []int64{st.pushed.Load()})
	out.Verified, out.Problem = v.Verified, v.Problem
	return out, nil
}

// xminVerdict states the ratios the target is about: throughput and p99 during the hold against before,
// after against before, and the dead rows per message.
func xminVerdict(label string, x *XminReport) []string {
	if x == nil || len(x.Phases) != 3 {
		return nil
	}
	b, h, a := x.Phases[0], x.Phases[1], x.Phases[2]
	var hot []string
	for _, t := range x.Tables[:min(4, len(x.Tables))] {
		hot = append(hot, fmt.Sprintf("%s %.2f/msg (%s→%s→%s)", t.Name, t.DeadPerMsg, mb(t.SizeBefore), mb(t.SizeReleased), mb(t.SizeAfter)))
	}
	return []string{
		fmt.Sprintf("%s: hold/before throughput %.2f (target >= 0.90), push->ack p99 %.2fx (target <= 2); after/before throughput %.2f, p99 %.2fx; horizon held %d transactions",
			label, ratio(h.ConsumeRate, b.ConsumeRate), ratio(h.E2E.P99, b.E2E.P99), ratio(a.ConsumeRate, b.ConsumeRate), ratio(a.E2E.P99, b.E2E.P99), x.HeldXminAge),
		fmt.Sprintf("%s: %.2f row versions made dead per message while held (rows updated or deleted; %.2f before; n_dead_tup grew %.2f per message); hot tables, dead per message and size before→at release→after: %s",
			label, x.DeadPerMessage, x.ChurnPerMessage, x.NDeadPerMessage, strings.Join(hot, "; ")),
	}
}

func mb(b int64) string { return fmt.Sprintf("%.1fMB", float64(b)/(1<<20)) }
