package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	queen "github.com/queen-go/queen/client"
	"github.com/queen-go/queen/client/streams"
)

// streamKeys is how many distinct keys the streams scenario aggregates per partition.
const streamKeys = 50

// runStreams measures the streams runtime end to end: a backlog of events (-duration × a nominal
// 10 000/s, at least 20 000) is pushed over -partitions partitions first, then two runners work it
// off through keyBy → 1 s tumbling window → aggregate(count, sum) → sink. It reports events/s from
// the first pop to the last acked event and the latency of every cycle commit, and verifies that the
// sink's aggregates count every event exactly once.
func (r *runner) runStreams(ctx context.Context) (*Result, error) {
	src, sink := r.queue("streams-src"), r.queue("streams-out")
	total := max(20_000, int(r.opt.duration.Seconds()*10_000))
	parts := r.partitionNames(r.opt.partitions)
	res := &Result{Name: "streams", Errors: map[string]int{},
		Setup: fmt.Sprintf("%d events over %d partitions, %d keys each; 2 runners (batch 200, 4 partitions per pop): keyBy → tumbling 1s → aggregate(count,sum) → sink",
			total, len(parts), streamKeys)}

	// A cycle the broker refuses leaves its batch leased: keep the redelivery within -lease.
	if err := r.prod.configure(ctx, src, max(1, int(r.opt.lease.Seconds()))); err != nil {
		return nil, fmt.Errorf("configure: %w", err)
	}
	// Prefill: the scenario measures the stream processor, not the producers.
	const batch = 500
	var wantSum float64
	for i := 0; i < total; i += batch {
		items := make([]pushItem, 0, batch)
		for j := i; j < min(total, i+batch); j++ {
			v := float64(j % 97)
			wantSum += v
			payload, _ := json.Marshal(map[string]any{"k": fmt.Sprint("k", j%streamKeys), "v": v})
			items = append(items, pushItem{Queue: src, Partition: parts[j%len(parts)], Payload: payload,
				TransactionID: fmt.Sprintf("%s-s-%d", r.tag, j)})
		}
		if _, err := r.prod.push(ctx, items); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
	}

	sdk, err := queen.New(queen.Config{URLs: r.prod.bases})
	if err != nil {
		return nil, err
	}
	var errMu sync.Mutex
	chain := streams.From(src).
		KeyBy(func(v any, _ streams.Context) (string, error) { return v.(map[string]any)["k"].(string), nil }).
		WindowTumbling(1, streams.WithIdleFlushMs(500)).
		Aggregate(map[string]streams.Extractor{"count": nil, "sum": func(v any) any { return v.(map[string]any)["v"] }}, "count", "sum").
		To(sink)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	opts := streams.RunOptions{QueryID: "bench-" + r.tag, URL: r.prod.bases[0], Client: sdk, BatchSize: 200, MaxPartitions: 4,
		MaxWaitMillis: 200, OnError: func(err error) {
			errMu.Lock()
			res.Errors[err.Error()]++
			errMu.Unlock()
		}}
	var runners []*streams.Runner
	cpu0 := r.cpu.read()
	start := time.Now()
	for range 2 {
		run, err := chain.Start(rctx, opts)
		if err != nil {
			return nil, err
		}
		_ = run.CycleLatencies() // start recording
		runners = append(runners, run)
	}
	processed := func() int64 {
		n := int64(0)
		for _, run := range runners {
			n += run.Metrics().Messages
		}
		return n
	}
	deadline := time.Now().Add(r.opt.drainTimeout)
	for processed() < int64(total) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu := r.cpu.read().sub(cpu0)
	res.Seconds = elapsed.Seconds()
	res.Pushed, res.Consumed = int64(total), processed()
	res.ConsumeRate = float64(res.Consumed) / elapsed.Seconds()
	pct := func(d time.Duration) float64 { return round1(100 * d.Seconds() / elapsed.Seconds()) }
	res.CPU = CPUShare{Broker: pct(cpu.Broker), Postgres: pct(cpu.Postgres), Harness: pct(cpu.Harness),
		Other: max(0, pct(cpu.Machine-cpu.Broker-cpu.Postgres-cpu.Harness))}
	var lat []time.Duration
	for _, run := range runners {
		lat = append(lat, run.CycleLatencies()...)
	}
	res.Tx = Summarize(lat)
	res.Notes = append(res.Notes, fmt.Sprintf("streams: %.0f events/s through the keyed tumbling-window aggregation; cycle commit latency p50/p95/p99 %s ms over %d cycles",
		res.ConsumeRate, res.Tx, res.Tx.Count))

	// Verify: once the idle flush closed the last windows, the sink's counts add up to the events.
	v := Verification{Queue: sink, Groups: 1, Pushed: total}
	var gotCount, gotSum float64
	for gotCount < float64(total) && time.Now().Before(deadline.Add(30*time.Second)) && ctx.Err() == nil {
		msgs, err := r.cons.pop(ctx, sink, "verify", r.opt.drainBatch, 16, time.Second)
		if err != nil {
			return res, fmt.Errorf("verify: %w", err)
		}
		var acks []ackItem
		for _, m := range msgs {
			var agg struct{ Count, Sum float64 }
			if err := json.Unmarshal(m.Data, &agg); err != nil {
				return res, fmt.Errorf("verify: %w", err)
			}
			gotCount += agg.Count
			gotSum += agg.Sum
			acks = append(acks, ackItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"})
		}
		if len(acks) > 0 {
			if _, err := r.cons.ackBatch(ctx, "verify", acks); err != nil {
				return res, fmt.Errorf("verify ack: %w", err)
			}
		}
	}
	stop()
	for _, run := range runners {
		_ = run.Wait()
	}
	v.Consumed = int(gotCount)
	v.Missing = max(0, total-int(gotCount))
	v.Duplicates = max(0, int(gotCount)-total)
	v.OK = gotCount == float64(total) && gotSum == wantSum
	if gotSum != wantSum {
		res.Notes = append(res.Notes, fmt.Sprintf("sink sum %.0f, want %.0f", gotSum, wantSum))
	}
	res.Verify = append(res.Verify, v)
	return res, nil
}
