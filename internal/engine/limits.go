package engine

import (
	"context"
	"fmt"
	"time"
)

// limitTTL bounds how long this broker trusts a queue's cached maxSize: pushes to queues without a
// limit (the common case) then cost no extra round-trip. A configure on this broker refreshes it at
// once; one on another broker is seen within limitTTL.
const limitTTL = 5 * time.Second

// limits returns the maxSize of each queue (0 = none, also for queues that do not exist yet).
func (e *Engine) limits(ctx context.Context, queues []string) (map[string]int32, error) {
	out := make(map[string]int32, len(queues))
	var missing []string
	for _, q := range queues {
		if max, ok := e.lim.get(q); ok {
			out[q] = max
		} else {
			missing = append(missing, q)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	got, err := e.st.QueueLimits(ctx, missing)
	if err != nil {
		return nil, err
	}
	fetched := make(map[string]int32, len(missing))
	for _, q := range missing {
		out[q], fetched[q] = got[q], got[q]
	}
	e.lim.putAll(fetched)
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
