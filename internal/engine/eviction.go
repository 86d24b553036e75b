package engine

import (
	"context"
	"log/slog"
	"time"
)

// evictionLockKey makes one broker per interval run the maxWaitTimeSeconds sweep.
const evictionLockKey = 0x5175_6565_6e45_56 // "QueenEV"

// evictLoop moves messages that waited longer than their queue's maxWaitTimeSeconds to the dead-letter
// queue (error "max wait time exceeded"), every EvictionInterval, until ctx ends.
func (e *Engine) evictLoop(ctx context.Context) {
	t := time.NewTicker(e.opt.EvictionInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := e.EvictExpired(ctx); err != nil && ctx.Err() == nil {
			e.log.WarnContext(ctx, "eviction sweep failed", slog.Any("error", err))
		}
	}
}

// EvictExpired runs one maxWaitTimeSeconds sweep now (in batches until nothing is left) and reports
// how many messages it moved.
func (e *Engine) EvictExpired(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := e.st.ExpireWaiting(ctx, evictionLockKey, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
}
