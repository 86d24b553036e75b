package engine

import (
	"context"
	"fmt"
	"time"
)

// limitTTL bounds how long this broker trusts a queue's cached maxSize: pushes to queues without a
// limit (the common case) then cost no extra round-trip. A configure refreshes it at once, here and,
// by NOTIFY, on the other brokers (changes.go); limitTTL bounds a lost notification.
const limitTTL = 5 * time.Second

// limits returns the maxSize of each queue (0 = none, also for queues that do not exist yet).
func (e *Engine) limits(ctx context.Context, queues []string) (map[string]int32, error) {
	max, err := readThrough(e.lim, queues, func(missing []string) (map[string]int32, error) {
		got, err := e.st.QueueLimits(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, q := range missing {
			if _, ok := got[q]; !ok {
				got[q] = 0 // a queue without a row has no limit, and that is worth caching too
			}
		}
		return got, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int32, len(queues))
	for i, q := range queues {
		out[q] = max[i]
	}
	return out, nil
}

// admit decides which items fit their queue's maxSize: it returns, per item, "" when it may be pushed
// or the refusal text. The backlog counts every message not yet consumed by every cursor of the queue;
// concurrent pushes may overshoot the limit by what they push together.
func (e *Engine) admit(ctx context.Context, items []PushItem) ([]string, error) {
	queues := Distinct(items, func(it PushItem) string { return it.Queue })
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

// Distinct lists the keys of xs once each, in the order they first appear.
func Distinct[T any, K comparable](xs []T, key func(T) K) []K {
	var out []K
	seen := map[K]bool{}
	for _, x := range xs {
		if k := key(x); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
