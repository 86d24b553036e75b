package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/queen-go/queen/internal/store"
)

// RetentionOptions configure the retention loop.
type RetentionOptions struct {
	Interval             time.Duration
	BatchSize            int
	PartitionCleanupDays int
	MetricsRetentionDays int
	NowFunc              func() time.Time
}

// NewRetentionLoop builds the loop that applies retention (see [Engine.RunRetention]).
func (e *Engine) NewRetentionLoop(o RetentionOptions) *Loop {
	return newLoop("retention", o.Interval, e.log, func(ctx context.Context) error {
		_, err := e.RunRetention(ctx, o)
		return err
	})
}

// RunRetention does one retention pass now: messages past retentionSeconds (any state), messages past
// completedRetentionSeconds that every group on the queue has consumed, empty partitions idle for
// PARTITION_CLEANUP_DAYS and history older than METRICS_RETENTION_DAYS. Only one broker of those
// sharing the database does a given pass.
func (e *Engine) RunRetention(ctx context.Context, o RetentionOptions) (store.RetentionResult, error) {
	if o.NowFunc == nil {
		o.NowFunc = time.Now
	}
	res, err := e.st.RunRetention(ctx, store.RetentionParams{
		Now: o.NowFunc(), BatchSize: max(o.BatchSize, 1), PartitionCleanupDays: o.PartitionCleanupDays,
		MetricsRetentionDays: o.MetricsRetentionDays,
	})
	if err != nil {
		return res, err
	}
	for _, m := range []map[string]int64{res.Expired, res.Completed, res.Partitions} {
		for q, n := range m {
			e.log.InfoContext(ctx, "retention deleted", slog.String("queue", q), slog.Int64("count", n))
		}
	}
	return res, nil
}
