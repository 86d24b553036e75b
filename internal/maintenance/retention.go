package maintenance

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

// NewRetention builds the loop that applies retention (see runRetention).
func NewRetention(st *store.Store, log *slog.Logger, o RetentionOptions) *Loop {
	return NewLoop("retention", o.Interval, log, func(ctx context.Context) error {
		_, err := runRetention(ctx, st, log, o)
		return err
	})
}

// passDeadline spends at most one interval on a pass's backlog (in real time, not NowFunc's: it bounds
// work, not ages), so that the next pass starts on time with a fresh Now.
func passDeadline(interval time.Duration) time.Time {
	if interval <= 0 {
		return time.Time{}
	}
	return time.Now().Add(interval)
}

// runRetention does one retention pass now: messages past retentionSeconds (any state), messages past
// completedRetentionSeconds that every group on the queue has consumed, empty partitions idle for
// PARTITION_CLEANUP_DAYS and history older than METRICS_RETENTION_DAYS. Only one broker of those
// sharing the database does a given pass.
func runRetention(ctx context.Context, st *store.Store, log *slog.Logger, o RetentionOptions) (store.RetentionResult, error) {
	if o.NowFunc == nil {
		o.NowFunc = time.Now
	}
	res, err := st.Jobs().RunRetention(ctx, store.RetentionParams{
		Now: o.NowFunc(), BatchSize: max(o.BatchSize, 1), PartitionCleanupDays: o.PartitionCleanupDays,
		MetricsRetentionDays: o.MetricsRetentionDays, Deadline: passDeadline(o.Interval),
	})
	if err != nil {
		return res, err
	}
	for _, m := range []map[string]int64{res.Expired, res.Completed, res.Partitions} {
		for q, n := range m {
			log.InfoContext(ctx, "retention deleted", slog.String("queue", q), slog.Int64("count", n))
		}
	}
	return res, nil
}
