package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

func printHeader(w io.Writer, rep Report, o options, brokerPID int) {
	fmt.Fprintf(w, "broker %s (local child: %v, pid %d)\n", rep.Broker, rep.Local, brokerPID)
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
	if r.Baseline != nil {
		b := r.Baseline
		fmt.Fprintf(w, "baseline: plain INSERT batch %d x %d conns: %.0f rows/s (p50/p95/p99 %s ms); push = %.0f%% of it\n", b.Batch, b.Concurrency, b.Rate, b.Latency, 100*b.Fraction)
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
	fmt.Fprintln(w, "\n== summary ==")
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
