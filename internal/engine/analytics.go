package engine

import (
	"context"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// QueueOpsSeries reads the operation counters history.
func (e *Engine) QueueOpsSeries(ctx context.Context, from, to time.Time, queue string, bucketMinutes int) ([]store.QueueOpsPoint, error) {
	out, err := e.st.QueueOpsSeries(ctx, from, to, queue, bucketMinutes)
	return out, opErr("queue ops", err)
}

// RetentionSeries reads the retention history.
func (e *Engine) RetentionSeries(ctx context.Context, from, to time.Time, bucketMinutes int) ([]store.RetentionPoint, error) {
	out, err := e.st.RetentionSeries(ctx, from, to, bucketMinutes)
	return out, opErr("retention history", err)
}
