package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// idlePollTimeout is the long-poll timeout of the idle scenario's consumers: what a consumer per
// partition typically waits before it asks again.
const idlePollTimeout = 30 * time.Second

// idlePushes is how many messages the idle scenario sends, one at a time, to time their delivery.
const idlePushes = 200

func init() {
	registerOptionalScenario("idle", "-idle-consumers consumers long-polling a partition each: the cost of idling, then push→delivery latency", func(ctx context.Context, r *runner) ([]*Result, error) {
		return one(r.runIdle(ctx))
	})
}

// runIdle parks -idle-consumers consumers, each long-polling its own partition (30 s timeout, asking
// again at once), measures the CPU of broker and PostgreSQL and the broker's RSS over a quiet window
// of -idle-window, then pushes one message at a time to a random partition and times how long it takes
// to reach the consumer parked there. Every partition starts with one message (which creates it), so
// exactly-once covers the first deliveries as well as the timed ones.
func (r *runner) runIdle(ctx context.Context) (*Result, error) {
	n := r.opt.idleConsumers
	queue := r.queue("idle")
	parts := r.partitionNames(n)
	res, err := r.start(ctx, "idle", queue)
	if err != nil {
		return nil, err
	}
	res.Errors = map[string]int{}
	res.Setup = fmt.Sprintf("%d consumers, each long-polling its own partition (timeout %s); quiet window %s, then %d single pushes to random partitions",
		n, idlePollTimeout, r.opt.idleWindow, idlePushes)
	defer func() {
		if !r.opt.keep {
			_ = r.prod.deleteQueue(context.Background(), queue)
			if r.opt.vacuumBetween {
				r.vacuumDatabase(context.Background())
			}
		}
	}()

	var mu sync.Mutex // protects pushed, acked, delivered, errors
	pushed := map[string]bool{}
	acked := map[string]int{}
	delivered := map[string]time.Time{}
	for i := 0; i < n; i += 500 {
		items := make([]pushItem, 0, 500)
		for j := i; j < min(n, i+500); j++ {
			tx := fmt.Sprintf("%s-i-%d", r.tag, j)
			items = append(items, pushItem{Queue: queue, Partition: parts[j], Payload: json.RawMessage(`"first"`), TransactionID: tx})
		}
		if _, err := r.prod.push(ctx, items); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		for _, it := range items {
			pushed[it.TransactionID] = true
		}
	}

	// One connection per parked consumer: the point is many requests held open at once.
	tr := &http.Transport{MaxIdleConnsPerHost: n, IdleConnTimeout: 2 * idlePollTimeout, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: idlePollTimeout + time.Minute}
	cons := &client{bases: r.cons.bases, next: r.cons.next, hc: hc, auth: r.cons.auth}
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	countErr := func(err error) {
		// One key per kind of error: the request id in a broker's answer would make each unique.
		msg, _, _ := strings.Cut(err.Error(), `,"requestId"`)
		mu.Lock()
		res.Errors[msg]++
		mu.Unlock()
	}
	for i := range n {
		c := cons.pinned()
		path := "/api/v1/pop/queue/" + url.PathEscape(queue) + "/partition/" + url.PathEscape(parts[i]) +
			fmt.Sprintf("?batch=1&wait=true&timeout=%d", idlePollTimeout.Milliseconds())
		wg.Go(func() {
			for cctx.Err() == nil {
				status, b, err := c.send(cctx, http.MethodGet, path, nil)
				if cctx.Err() != nil {
					return
				}
				if err != nil {
					countErr(err)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if status == http.StatusNoContent || len(b) == 0 {
					continue
				}
				var msgs []popMessage
				if m, ok := scanPopMessages(b, nil); ok {
					msgs = m
				} else {
					var pr popResponse
					if err := json.Unmarshal(b, &pr); err != nil {
						countErr(err)
						continue
					}
					msgs = pr.Messages
				}
				at := time.Now()
				acks := make([]ackItem, len(msgs))
				for k, m := range msgs {
					acks[k] = ackItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"}
				}
				out, err := c.ackBatch(context.WithoutCancel(cctx), "", acks)
				if err != nil {
					countErr(err)
					continue
				}
				mu.Lock()
				for k, a := range out {
					if a.Success && k < len(msgs) {
						acked[msgs[k].TransactionID]++
						if _, ok := delivered[msgs[k].TransactionID]; !ok {
							delivered[msgs[k].TransactionID] = at
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	defer func() {
		stop()
		wg.Wait()
	}()

	// Settle: every first message consumed and every consumer parked again.
	settle := time.Now().Add(r.opt.drainTimeout)
	for time.Now().Before(settle) && ctx.Err() == nil {
		mu.Lock()
		done := len(delivered) >= n
		mu.Unlock()
		if done && r.parked(ctx) >= n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	parkedAtStart := r.parked(ctx)

	// The quiet window.
	r.rss.reset()
	elapsed, cpu, err := r.quietWindow(ctx, r.opt.idleWindow)
	if err != nil {
		return nil, err
	}
	res.MaxRSSMB = round1(float64(r.rss.reset()) / (1 << 20))
	res.Seconds = elapsed.Seconds()
	res.CPU = cpuShare(cpu, elapsed.Seconds())

	// Push → delivery, one message at a time to a random partition.
	var lat []time.Duration
	for i := range idlePushes {
		if ctx.Err() != nil {
			break
		}
		tx := fmt.Sprintf("%s-p-%d", r.tag, i)
		mu.Lock()
		pushed[tx] = true
		mu.Unlock()
		sent := time.Now()
		if _, err := r.prod.push(ctx, []pushItem{{Queue: queue, Partition: parts[rand.IntN(n)], Payload: json.RawMessage(`"timed"`), TransactionID: tx}}); err != nil {
			countErr(err)
			continue
		}
		deadline := time.Now().Add(idlePollTimeout + 5*time.Second)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			mu.Lock()
			at, ok := delivered[tx]
			mu.Unlock()
			if ok {
				lat = append(lat, at.Sub(sent))
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	res.E2E = Summarize(lat)
	res.Pushed, res.Consumed = int64(len(pushed)), int64(len(delivered))
	res.Notes = append(res.Notes,
		fmt.Sprintf("idle: %d parked at the window's start; broker %.1f%% + postgres %.1f%% = %.1f%% of one core while idle (other processes %.0f%%), broker max RSS %.1f MB",
			parkedAtStart, res.CPU.Broker, res.CPU.Postgres, res.CPU.Broker+res.CPU.Postgres, res.CPU.Other, res.MaxRSSMB),
		fmt.Sprintf("idle: push→delivery p50/p95/p99 %s ms over %d pushes", res.E2E, res.E2E.Count))

	// Exactly once: every message pushed was acked once, and nothing else was.
	deadline := time.Now().Add(r.opt.drainTimeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		mu.Lock()
		done := len(delivered) >= len(pushed)
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	wg.Wait()
	v := Verification{Queue: queue, Groups: 1, Pushed: len(pushed)}
	for tx := range pushed {
		switch c := acked[tx]; {
		case c == 0:
			v.Missing++
			if len(v.Sample) < 5 {
				v.Sample = append(v.Sample, tx)
			}
		default:
			v.Consumed++
			v.Duplicates += c - 1
		}
	}
	for tx := range acked {
		if !pushed[tx] {
			v.Unexpected++
		}
	}
	v.OK = v.Missing == 0 && v.Duplicates == 0 && v.Unexpected == 0
	res.Verify = append(res.Verify, v)
	return res, nil
}

// parked asks the broker(s) how many long-polls are parked (GET /metrics), summed; 0 when unknown.
func (r *runner) parked(ctx context.Context) int {
	total := 0
	for _, base := range r.prod.bases {
		c := &client{bases: []string{base}, next: r.prod.next, hc: r.prod.hc, auth: r.prod.auth}
		var m struct {
			Parked int `json:"parked"`
		}
		if _, err := c.do(ctx, http.MethodGet, "/metrics", nil, &m); err == nil {
			total += m.Parked
		}
	}
	return total
}

// quietWindow waits d while nothing is sent and returns how long it lasted and the CPU each process
// used meanwhile.
func (r *runner) quietWindow(ctx context.Context, d time.Duration) (time.Duration, cpuTimes, error) {
	cpu0 := r.cpu.read()
	start := time.Now()
	select {
	case <-ctx.Done():
		return 0, cpuTimes{}, ctx.Err()
	case <-time.After(d):
	}
	return time.Since(start), r.cpu.read().sub(cpu0), nil
}
