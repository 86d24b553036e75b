package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// limitCache remembers each queue's maxSize for a few seconds, so that pushes to queues without a
// limit (the common case) cost no extra round-trip. A configure on this broker refreshes it at once;
// one on another broker is seen within limitTTL.
type limitCache struct {
	mu sync.Mutex // protects m
	m  map[string]limitEntry
}

type limitEntry struct {
	max int32
	at  time.Time
}

const limitTTL = 5 * time.Second

func (c *limitCache) forget(queue string) {
	c.mu.Lock()
	delete(c.m, queue)
	c.mu.Unlock()
}

// limits returns the maxSize of each queue (0 = none, also for queues that do not exist yet).
func (e *Engine) limits(ctx context.Context, queues []string) (map[string]int32, error) {
	now := time.Now()
	out := make(map[string]int32, len(queues))
	var missing []string
	e.lim.mu.Lock()
	for _, q := range queues {
		if ent, ok := e.lim.m[q]; ok && now.Sub(ent.at) < limitTTL {
			out[q] = ent.max
		} else {
			missing = append(missing, q)
		}
	}
	e.lim.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := e.st.QueueLimits(ctx, missing)
	if err != nil {
		return nil, err
	}
	e.lim.mu.Lock()
	if e.lim.m == nil || len(e.lim.m) > 100_000 {
		e.lim.m = map[string]limitEntry{}
	}
	for _, q := range missing {
		out[q] = got[q]
		e.lim.m[q] = limitEntry{max: got[q], at: now}
	}
	e.lim.mu.Unlock()
	return out, nil
}

// admit decides which items fit their queue's maxSize: it returns, per item, "" when it may be pushed
// or the refusal text. The backlog counts every message not yet consumed by every cursor of the queue;
// concurrent pushes may overshoot the limit by what they push together.
func (e *Engine) admit(ctx context.Context, items []PushItem, queues []string) ([]string, error) {
	lim, err := e.limits(ctx, queues)
	if err != nil {
		return nil, err
	}
	var limited []string
	for _, q := range queues {
		if lim[q] > 0 {
			limited = append(limited, q)
		}
	}
	refused := make([]string, len(items))
	if len(limited) == 0 {
		return refused, nil
	}
	backlog, err := e.st.QueueBacklogs(ctx, limited)
	if err != nil {
		return nil, err
	}
	room := map[string]int64{}
	for _, q := range limited {
		b := backlog[q]
		room[q] = int64(lim[q]) - b.Pending
	}
	for i, it := range items {
		r, ok := room[it.Queue]
		if !ok {
			continue
		}
		if r <= 0 {
			refused[i] = fmt.Sprintf("queue %s is full: maxSize %d reached", it.Queue, lim[it.Queue])
			continue
		}
		room[it.Queue] = r - 1
	}
	return refused, nil
}
