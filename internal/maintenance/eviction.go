package engine

import (
	"context"
)

// evictionLockKey makes one broker per interval run the maxWaitTimeSeconds sweep.
const evictionLockKey = 0x5175_6565_6e45_56 // "QueenEV"

// NewEvictionLoop builds the loop that moves messages that waited longer than their queue's
// maxWaitTimeSeconds to the dead-letter queue (error "max wait time exceeded"), every EvictionInterval.
// One broker per pass does the work (an advisory lock); the others skip it.
func (e *Engine) NewEvictionLoop() *Loop {
	return newLoop("eviction", e.opt.EvictionInterval, e.log, func(ctx context.Context) error {
		_, err := e.evictExpired(ctx)
		return err
	})
}

// evictExpired runs one maxWaitTimeSeconds sweep now (in batches until nothing is left) and reports
// how many messages it moved.
func (e *Engine) evictExpired(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := e.st.ExpireWaiting(ctx, evictionLockKey, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
}
