package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// NewEviction builds the loop that moves messages that waited longer than their queue's
// maxWaitTimeSeconds to the dead-letter queue (error "max wait time exceeded"), every interval.
// One broker per pass does the work (an advisory lock); the others skip it.
func NewEviction(st *store.Store, log *slog.Logger, interval time.Duration) *Loop {
	return NewLoop("eviction", interval, log, func(ctx context.Context) error {
		_, err := evictExpired(ctx, st)
		return err
	})
}

// evictExpired runs one maxWaitTimeSeconds sweep now (in batches until nothing is left) and reports
// how many messages it moved.
func evictExpired(ctx context.Context, st *store.Store) (int64, error) {
	var total int64
	for {
		n, err := st.Jobs().ExpireWaiting(ctx, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
}
