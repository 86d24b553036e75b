package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// Loop is a background job run every interval, with the lifecycle shared by the broker's loops:
// Start(ctx) error, an idempotent Stop(), and Started()/Stopped() channels.
type Loop struct {
	name     string
	interval time.Duration
	run      func(ctx context.Context) error
	log      *slog.Logger

	mu      sync.Mutex // protects cancel, started, stopped, running
	cancel  context.CancelFunc
	started chan struct{}
	stopped chan struct{}
	running bool
}

func newLoop(name string, interval time.Duration, log *slog.Logger, run func(ctx context.Context) error) *Loop {
	return &Loop{name: name, interval: interval, run: run, log: log,
		started: make(chan struct{}), stopped: make(chan struct{})}
}

// Start launches the loop; the first pass runs at once. Starting a running loop is an error.
func (l *Loop) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		return errors.New("engine: " + l.name + " loop already started")
	}
	if l.interval <= 0 {
		return errors.New("engine: " + l.name + " loop needs a positive interval")
	}
	l.running = true
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	started, stopped := l.started, l.stopped
	go func() {
		defer close(stopped)
		close(started)
		t := time.NewTicker(l.interval)
		defer t.Stop()
		for {
			if err := l.run(ctx); err != nil && ctx.Err() == nil {
				l.log.WarnContext(ctx, "background pass failed", slog.String("loop", l.name), slog.Any("error", err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop ends the loop and waits for its goroutine; it is safe to call more than once, or before Start.
func (l *Loop) Stop() {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		return
	}
	l.cancel()
	stopped := l.stopped
	l.running = false
	l.started, l.stopped = make(chan struct{}), make(chan struct{})
	l.mu.Unlock()
	<-stopped
}

// Started is closed once the current run's goroutine is up.
func (l *Loop) Started() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started
}

// Stopped is closed when the current run's goroutine has exited.
func (l *Loop) Stopped() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

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
		ops := e.ops.counters.take()
		if err := e.st.AddQueueOps(ctx, o.NowFunc(), brokerID, ops); err != nil {
			e.ops.counters.putBack(ops)
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
