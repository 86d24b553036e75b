package engine

import (
	"sync"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// queueCounters accumulates per-queue operation counts between two flushes of the stats loop.
type queueCounters struct {
	mu sync.Mutex // protects m
	m  map[string]*store.QueueOps
}

func (c *queueCounters) with(queue string, f func(*store.QueueOps)) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*store.QueueOps{}
	}
	o := c.m[queue]
	if o == nil {
		o = &store.QueueOps{Queue: queue}
		c.m[queue] = o
	}
	f(o)
	c.mu.Unlock()
}

// take returns the counts since the last take and starts over.
func (c *queueCounters) take() []store.QueueOps {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]store.QueueOps, 0, len(c.m))
	for _, o := range c.m {
		out = append(out, *o)
	}
	c.m = nil
	return out
}

// putBack re-adds counts whose flush failed, so they go out with the next one.
func (c *queueCounters) putBack(ops []store.QueueOps) {
	for _, d := range ops {
		c.with(d.Queue, func(o *store.QueueOps) { o.Add(d) })
	}
}

// Observer is told about every applied push, pop and ack (the metrics collectors implement it).
type Observer interface {
	Pushed(queue string, messages int)
	Popped(queue string, messages int, lagSeconds []float64)
	Acked(queue, status string, messages int)
}

func (e *Engine) observer() Observer { return e.opt.Observer }

// observePush records the queued items of one push request.
func (e *Engine) observePush(res []PushResult) {
	per := map[string]int{}
	for _, r := range res {
		if _, ok := per[r.QueueName]; !ok {
			per[r.QueueName] = 0
		}
		if r.Status == StatusQueued {
			per[r.QueueName]++
		}
	}
	obs := e.observer()
	for q, n := range per {
		e.counters.with(q, func(o *store.QueueOps) { o.PushRequests++; o.PushMessages += int64(n) })
		if obs != nil && n > 0 {
			obs.Pushed(q, n)
		}
	}
}

// observePop records one pop attempt; res nil is an empty pop.
func (e *Engine) observePop(queue string, res *PopResult, created []time.Time) {
	if res == nil {
		e.counters.with(queue, func(o *store.QueueOps) { o.PopRequests++; o.PopEmpty++ })
		return
	}
	now := time.Now()
	lags := make([]float64, len(created))
	var sum, mx int64
	for i, c := range created {
		ms := max(now.Sub(c).Milliseconds(), 0)
		sum += ms
		mx = max(mx, ms)
		lags[i] = float64(ms) / 1000
	}
	e.counters.with(queue, func(o *store.QueueOps) {
		o.PopRequests++
		o.PopMessages += int64(len(created))
		o.LagSumMs += sum
		o.LagCount += int64(len(created))
		o.LagMaxMs = max(o.LagMaxMs, mx)
	})
	if obs := e.observer(); obs != nil {
		obs.Popped(queue, len(created), lags)
	}
}

// observeAck records the applied items of one ack request.
func (e *Engine) observeAck(items []AckItem, res []AckResult) {
	obs := e.observer()
	for i, r := range res {
		if !r.Success || r.Noop || r.QueueName == nil || i >= len(items) {
			continue
		}
		q, status := *r.QueueName, items[i].Status
		e.counters.with(q, func(o *store.QueueOps) {
			switch {
			case r.DLQ:
				o.DLQ++
				o.AckFailed++
			case status == AckFailed || status == AckRetry:
				o.AckFailed++
			default:
				o.AckSuccess++
			}
		})
		if obs != nil {
			switch {
			case r.DLQ:
				status = AckDLQ
			case status == AckSuccess:
				status = AckCompleted
			}
			obs.Acked(q, status, 1)
		}
	}
}

// TakeQueueOps hands the stats loop the operation counts since its last take.
func (e *Engine) TakeQueueOps() []store.QueueOps { return e.counters.take() }

// PutBackQueueOps returns counts whose flush failed, so they go out with the next one.
func (e *Engine) PutBackQueueOps(ops []store.QueueOps) { e.counters.putBack(ops) }
