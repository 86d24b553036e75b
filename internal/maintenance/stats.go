package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// StatsSnapshot is what the stats loop read on its last pass, for the metrics gauges.
type StatsSnapshot struct {
	At     time.Time
	Queues []store.QueueSummary // from store.QueueGauges: names and rolled-up counts only
	DLQ    map[string]int64
}

// Counters hands over the operation counters collected since the last take; the engine implements it.
type Counters interface {
	TakeQueueOps() []store.QueueOps
	PutBackQueueOps(ops []store.QueueOps) // a flush failed: the counts go out with the next one
}

// StatsOptions configure the stats loop.
type StatsOptions struct {
	Interval time.Duration
	NowFunc  func() time.Time
	// OnSnapshot receives every pass's snapshot (the metrics gauges); may be nil.
	OnSnapshot func(StatsSnapshot)
}

// statsDuty bounds the share of the time the stats loop spends in passes. A pass recomputes only the
// partitions changed since the last one (docs/decisions.md "Stats from counters"), but one that finds
// most of them changed (the first after an upgrade, a seek of a large queue) costs about a second of
// PostgreSQL time per 100 000 partitions: bounded, its counts age instead of taking that share of a
// core from the pushes and pops they report on.
const statsDuty = 0.1

// NewStatsLoop builds the loop that flushes this broker's operation counters to queue_ops_history and
// refreshes the rolled-up queue_stats table (every broker flushes and hands its changes over; one
// broker per pass recomputes them).
func NewStats(st *store.Store, counters Counters, log *slog.Logger, o StatsOptions) *Loop {
	if o.NowFunc == nil {
		o.NowFunc = time.Now
	}
	brokerID := uuid.Must(uuid.NewV7()).String()
	return NewLoop("stats", o.Interval, log, func(ctx context.Context) error {
		ops := counters.TakeQueueOps()
		if err := st.Jobs().AddQueueOps(ctx, o.NowFunc(), brokerID, ops); err != nil {
			counters.PutBackQueueOps(ops)
			return err
		}
		if _, err := st.Jobs().RefreshQueueStats(ctx); err != nil {
			return err
		}
		if o.OnSnapshot == nil {
			return nil
		}
		qs, err := st.Jobs().QueueGauges(ctx, 100_000)
		if err != nil {
			return err
		}
		dlq, err := st.DeadLetters().DLQByQueue(ctx)
		if err != nil {
			return err
		}
		o.OnSnapshot(StatsSnapshot{At: o.NowFunc(), Queues: qs, DLQ: dlq})
		return nil
	}).BoundDuty(statsDuty)
}
