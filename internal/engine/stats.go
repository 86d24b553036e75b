package engine

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// StatsSnapshot is what the stats loop read on its last pass, for the metrics gauges.
type StatsSnapshot struct {
	At     time.Time
	Queues []store.QueueSummary
	DLQ    map[string]int64
}

// StatsOptions configure the stats loop.
type StatsOptions struct {
	Interval time.Duration
	NowFunc  func() time.Time
	// OnSnapshot receives every pass's snapshot (the metrics gauges); may be nil.
	OnSnapshot func(StatsSnapshot)
}

// NewStatsLoop builds the loop that flushes this broker's operation counters to queue_ops_history and
// refreshes the rolled-up queue_stats table (one broker per pass refreshes; every broker flushes).
func (e *Engine) NewStatsLoop(o StatsOptions) *Loop {
	if o.NowFunc == nil {
		o.NowFunc = time.Now
	}
	brokerID := uuid.Must(uuid.NewV7()).String()
	return newLoop("stats", o.Interval, e.log, func(ctx context.Context) error {
		ops := e.counters.take()
		if err := e.st.AddQueueOps(ctx, o.NowFunc(), brokerID, ops); err != nil {
			e.counters.putBack(ops)
			return err
		}
		if _, err := e.st.RefreshQueueStats(ctx); err != nil {
			return err
		}
		if o.OnSnapshot == nil {
			return nil
		}
		qs, err := e.st.ListQueues(ctx, store.ListQueuesParams{Limit: 100_000})
		if err != nil {
			return err
		}
		dlq, err := e.st.DLQByQueue(ctx)
		if err != nil {
			return err
		}
		o.OnSnapshot(StatsSnapshot{At: o.NowFunc(), Queues: qs, DLQ: dlq})
		return nil
	})
}
