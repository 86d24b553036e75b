package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

func printHeader(w io.Writer, rep Report, o options, brokerPIDs []int) {
	if len(rep.Brokers) > 1 {
		route := "each request to the next broker"
		if o.affinity {
			route = "each producer and consumer loop to one broker"
		}
		fmt.Fprintf(w, "[%s] %d brokers on one database %v (local children: %v, pids %v, build %s); %s; CPU is their sum, RSS their largest\n",
			rep.Target, len(rep.Brokers), rep.Brokers, rep.Local, brokerPIDs, rep.Commit, route)
	} else {
		fmt.Fprintf(w, "[%s] broker %s (local child: %v, pids %v, build %s)\n", rep.Target, rep.Broker, rep.Local, brokerPIDs, rep.Commit)
	}
	if rep.Durable != nil {
		fmt.Fprintf(w, "postgres durable: %v\n", *rep.Durable)
	}
	if rep.PGSettings != "" {
		fmt.Fprintf(w, "postgres: %s\n", rep.PGSettings)
	}
	fmt.Fprintf(w, "%d CPUs, %s; producers %d, consumers %d, conns %d per role, payload %d B, partitions %d, window %v\n",
		rep.CPUs, rep.GoVersion, o.producers, o.consumers, o.conns, o.msgSize, o.partitions, o.duration)
	fmt.Fprintln(w, "latencies are p50/p95/p99 ms; pop->ack = from a pop response to its ack (or transaction) response;")
	fmt.Fprintln(w, "push->ack = per message, from sending its push to receiving its ack response")
}

func printResult(w io.Writer, r *Result) {
	if r.Skipped != "" {
		fmt.Fprintf(w, "%s: skipped: %s\n", r.Name, r.Skipped)
		return
	}
	fmt.Fprintf(w, "setup: %s\n", r.Setup)
	fmt.Fprintf(w, "window %.1fs: pushed %d (%.0f msg/s), consumed %d (%.0f msg/s)\n", r.Seconds, r.Pushed, r.PushRate, r.Consumed, r.ConsumeRate)
	fmt.Fprintf(w, "latency ms: push %s | pop %s | ack %s | tx %s | pop->ack %s | push->ack %s\n", r.Push, r.Pop, r.Ack, r.Tx, r.PopToAck, r.E2E)
	fmt.Fprintf(w, "cpu %% of one core: broker %.0f, postgres %.0f, harness %.0f, other processes %.0f; broker max RSS %.1f MB\n", r.CPU.Broker, r.CPU.Postgres, r.CPU.Harness, r.CPU.Other, r.MaxRSSMB)
	if n := r.Pushed + r.Consumed; n > 0 && r.Seconds > 0 {
		// CPU per message is what survives a busy host; on a CPU-bound one rates follow from it.
		per := func(pct float64) float64 { return pct / 100 * r.Seconds * 1e6 / float64(n) }
		fmt.Fprintf(w, "cpu µs per message pushed or consumed: broker %.2f, postgres %.2f, harness %.2f\n", per(r.CPU.Broker), per(r.CPU.Postgres), per(r.CPU.Harness))
		if r.CPU.Proxy > 0 && r.Requests > 0 {
			fmt.Fprintf(w, "proxy: %.0f%% of one core; %.1f µs of CPU per request (%d requests), %.2f per message pushed or consumed\n",
				r.CPU.Proxy, r.CPU.Proxy/100*r.Seconds*1e6/float64(r.Requests), r.Requests, per(r.CPU.Proxy))
		}
	}
	if r.Baseline != nil {
		b := r.Baseline
		pg := ""
		if b.PGMicrosPerRow > 0 {
			pg = fmt.Sprintf("; PostgreSQL %.1f µs of CPU per row", b.PGMicrosPerRow)
		}
		fmt.Fprintf(w, "baseline: plain INSERT batch %d x %d conns: %.0f rows/s (p50/p95/p99 %s ms)%s; push = %.0f%% of it\n", b.Batch, b.Concurrency, b.Rate, b.Latency, pg, 100*b.Fraction)
	}
	if s := r.SkipLocked; s != nil {
		ver := "verified"
		if !s.Verified {
			ver = "VERIFICATION FAILED: " + s.Problem
		}
		fmt.Fprintf(w, "skip-locked baseline: %d table(s) x %d workers, SELECT … FOR UPDATE SKIP LOCKED LIMIT %d + DELETE per transaction: %.0f rows/s (tx p50/p95/p99 %s ms), %s; ours = %.2fx of it\n",
			s.Tables, s.Workers, s.Batch, s.Rate, s.Latency, ver, s.Ratio)
	}
	if r.Xmin != nil {
		printPhases(w, "xmin-hold queen      ", r.Xmin.Phases)
	}
	if r.XminSkipLocked != nil {
		printPhases(w, "xmin-hold skip-locked", r.XminSkipLocked.Phases)
		if !r.XminSkipLocked.Verified {
			fmt.Fprintf(w, "xmin-hold skip-locked VERIFICATION FAILED: %s\n", r.XminSkipLocked.Problem)
		}
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		fmt.Fprintln(w, "errors: 0")
	}
	for _, k := range keys {
		fmt.Fprintf(w, "error x%d: %s\n", r.Errors[k], k)
	}
	for _, v := range r.Verify {
		status := "OK"
		if !v.OK {
			status = "FAILED"
		}
		fmt.Fprintf(w, "verify %s: %s — %d groups, %d queued, %d consumed, %d missing, %d duplicates, %d unexpected, %d in doubt\n",
			v.Queue, status, v.Groups, v.Pushed, v.Consumed, v.Missing, v.Duplicates, v.Unexpected, v.InDoubt)
		if !v.OK && len(v.Sample) > 0 {
			fmt.Fprintf(w, "  e.g. %s\n", strings.Join(v.Sample, ", "))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func printSummary(w io.Writer, rep Report) {
	fmt.Fprintf(w, "\n== summary: %s (%s) ==\n", rep.Target, rep.Broker)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tpush msg/s\tconsume msg/s\tpush p50/p95/p99\tpop->ack p50/p95/p99\tpush->ack p50/p95/p99\terrors\tRSS MB\tCPU broker/pg/other %\tvs INSERT\tverified")
	for _, r := range rep.Results {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\tskipped: %s\n", r.Name, r.Skipped)
			continue
		}
		errs := 0
		for _, n := range r.Errors {
			errs += n
		}
		vs := "-"
		if r.Baseline != nil {
			vs = fmt.Sprintf("%.0f%% of %.0f", 100*r.Baseline.Fraction, r.Baseline.Rate)
		}
		ver := "ok"
		if r.Failed() {
			ver = "FAILED"
		} else if len(r.Verify) == 0 {
			ver = "n/a"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%.0f/%.0f/%.0f\t%s\t%s\n", r.Name, rate(r.PushRate), rate(r.ConsumeRate),
			r.Push, r.PopToAck, r.E2E, errs, r.MaxRSSMB, r.CPU.Broker, r.CPU.Postgres, r.CPU.Other, vs, ver)
	}
	tw.Flush()
}

func rate(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

// headline is the rate a scenario is judged by: deliveries for consumers, pushes otherwise.
func headline(r *Result) float64 {
	if r.ConsumeRate > 0 && !strings.HasPrefix(r.Name, "push-") {
		return r.ConsumeRate
	}
	return r.PushRate
}

// printComparison prints each scenario's rates on both targets and the ratio queen/compare; with
// proxied (b went through the proxy, a straight to its broker) also the proxy's target 8 per scenario.
func printComparison(w io.Writer, a, b []*Result, proxied bool) {
	byName := map[string]*Result{}
	for _, r := range b {
		byName[r.Name] = r
	}
	fmt.Fprintln(w, "\n-- comparison (same run, back to back) --")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tqueen push/s\tcompare push/s\tqueen consume/s\tcompare consume/s\theadline ratio queen/compare\tverified")
	for _, r := range a {
		o := byName[r.Name]
		if o == nil || r.Skipped != "" || o.Skipped != "" {
			continue
		}
		ratio := "-"
		if h := headline(o); h > 0 {
			ratio = fmt.Sprintf("%.2f", headline(r)/h)
		}
		ver := "ok/ok"
		if r.Failed() || o.Failed() {
			ver = fmt.Sprintf("%v/%v", !r.Failed(), !o.Failed())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, rate(r.PushRate), rate(o.PushRate), rate(r.ConsumeRate), rate(o.ConsumeRate), ratio, ver)
	}
	tw.Flush()
	if proxied {
		printProxyTarget(w, a, byName)
	}
}

// printProxyTarget prints, per scenario, the rate through the proxy as a fraction of the direct one
// (target >= 0.8) and what the proxy added to the p50 latency of the scenario's request (push, else
// pop; target <= 1 ms).
func printProxyTarget(w io.Writer, direct []*Result, proxied map[string]*Result) {
	fmt.Fprintln(w, "targets (through the proxy vs direct, this run):")
	for _, d := range direct {
		p := proxied[d.Name]
		if p == nil || d.Skipped != "" || p.Skipped != "" || headline(d) <= 0 {
			continue
		}
		ratio := headline(p) / headline(d)
		what, dl, pl := "push", d.Push.P50, p.Push.P50
		if d.Push.Count == 0 {
			what, dl, pl = "pop", d.Pop.P50, p.Pop.P50
		}
		fmt.Fprintf(w, "  %-18s rate %.2f (target >= 0.80) %s; %s p50 %+.2f ms (target <= +1.00) %s\n", d.Name, ratio, okMark(ratio >= 0.8),
			what, pl-dl, okMark(pl-dl <= 1))
	}
}

// printTargets checks the ratio targets among the results present (ratios within one run).
func printTargets(w io.Writer, rs []*Result) {
	by := map[string]*Result{}
	for _, r := range rs {
		if r.Skipped == "" {
			by[r.Name] = r
		}
	}
	type check struct {
		what      string
		num, den  string
		numF      func(*Result) float64
		denF      func(*Result) float64
		threshold float64
	}
	cons := func(r *Result) float64 { return r.ConsumeRate }
	push := func(r *Result) float64 { return r.PushRate }
	checks := []check{
		{"10k partitions consume vs 10", "partitions-10000", "partitions-10", cons, cons, 0.5},
		{"100k partitions consume vs 10", "partitions-100000", "partitions-10", cons, cons, 0.3},
		{"10 groups deliveries vs 1 group", "fanout-g10", "fanout-g1", cons, cons, 5},
		{"10 groups push vs plain push b10", "fanout-g10", "push-b10", push, push, 0.4},
	}
	var lines []string
	for _, c := range checks {
		n, d := by[c.num], by[c.den]
		if n == nil || d == nil || c.denF(d) == 0 {
			continue
		}
		v := c.numF(n) / c.denF(d)
		lines = append(lines, fmt.Sprintf("%-36s %8.2f  (target >= %.2f) %s", c.what, v, c.threshold, okMark(v >= c.threshold)))
	}
	if r := by["push-b100"]; r != nil && r.Baseline != nil {
		lines = append(lines, fmt.Sprintf("%-36s %8.2f  (target >= 0.60) %s", "push b100 vs plain INSERT", r.Baseline.Fraction, okMark(r.Baseline.Fraction >= 0.6)))
	}
	for _, r := range rs {
		if s := r.SkipLocked; s != nil && s.Rate > 0 {
			lines = append(lines, fmt.Sprintf("%-36s %8.2f  (target >= 1.00) %s", r.Name+" vs SKIP LOCKED", s.Ratio, okMark(s.Ratio >= 1)))
		}
	}
	for _, n := range []string{"push-b10", "pop-ack"} {
		f, a := by[n+"-fresh"], by[n+"-after-delete"]
		if f != nil && a != nil && headline(f) > 0 {
			v := headline(a) / headline(f)
			lines = append(lines, fmt.Sprintf("%-36s %8.2f  (target >= 0.90) %s", n+" after delete vs fresh", v, okMark(v >= 0.9)))
		}
	}
	if r := by["partitions-10000"]; r != nil {
		lines = append(lines, fmt.Sprintf("%-36s %8.0f ms (target < 2000) %s", "10k partitions push->ack p99", r.E2E.P99, okMark(r.E2E.P99 < 2000)))
	}
	maxRSS, where := 0.0, ""
	for _, r := range rs {
		if r.MaxRSSMB > maxRSS {
			maxRSS, where = r.MaxRSSMB, r.Name
		}
	}
	if maxRSS > 0 {
		lines = append(lines, fmt.Sprintf("%-36s %8.1f MB (target < 64, in %s) %s", "broker max RSS", maxRSS, where, okMark(maxRSS < 64)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "targets (ratios within this run):")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}

func okMark(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}
