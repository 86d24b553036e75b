package maintenance

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Loop is a background job run every interval, with the lifecycle shared by the broker's loops:
// Start(ctx) error, an idempotent Stop(), and Started()/Stopped() channels.
type Loop struct {
	name     string
	interval time.Duration
	run      func(ctx context.Context) error
	log      *slog.Logger
	wake     <-chan struct{} // WakeOn: asks for a pass before the interval is up
	duty     float64         // BoundDuty: the largest share of the time passes may take (0: no bound)
	outages  *OutageLog      // ReportOutages: where passes that cannot reach PostgreSQL are reported

	mu      sync.Mutex // protects cancel, started, stopped, running
	cancel  context.CancelFunc
	started chan struct{}
	stopped chan struct{}
	running bool
}

// NewLoop builds a loop named name that calls run every interval, logging failed passes to log.
func NewLoop(name string, interval time.Duration, log *slog.Logger, run func(ctx context.Context) error) *Loop {
	return &Loop{name: name, interval: interval, run: run, log: log, outages: NewOutageLog(log),
		started: make(chan struct{}), stopped: make(chan struct{})}
}

// ReportOutages makes the loop report the passes that cannot reach PostgreSQL to o, shared with the
// broker's other loops, so that an outage is logged once for all of them. Call it before Start.
func (l *Loop) ReportOutages(o *OutageLog) *Loop {
	l.outages = o
	return l
}

// Start launches the loop; the first pass runs at once. Starting a running loop is an error.
func (l *Loop) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		return errors.New("maintenance: " + l.name + " loop already started")
	}
	if l.interval <= 0 {
		return errors.New("maintenance: " + l.name + " loop needs a positive interval")
	}
	l.running = true
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	started, stopped := l.started, l.stopped
	go func() {
		defer close(stopped)
		close(started)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			began := time.Now()
			switch err := l.run(ctx); {
			case ctx.Err() != nil:
			case err == nil:
				l.outages.succeeded(l.name)
			case Unreachable(err):
				l.outages.failed(l.name, err)
			default:
				l.outages.succeeded(l.name) // it reached PostgreSQL: this failure is the pass's own
				l.log.WarnContext(ctx, "background pass failed", slog.String("loop", l.name), slog.Any("error", err))
			}
			t.Reset(l.pause(time.Since(began)))
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-l.wake:
			}
		}
	}()
	return nil
}

// WakeOn makes the loop run a pass whenever ch receives, besides every interval. Call it before Start.
func (l *Loop) WakeOn(ch <-chan struct{}) *Loop {
	l.wake = ch
	return l
}

// BoundDuty keeps the loop's passes to at most share (0 < share < 1) of its time: after a pass that
// took longer than share × interval, the next one waits until the pass's time is that share of the
// whole, instead of starting one interval after the last began. A job whose pass grows with the data
// (the stats pass visits every partition) then gives way to the work it describes, and its results
// age by more than an interval only while a pass takes longer than that share. WakeOn's passes are
// not held back. Call it before Start.
func (l *Loop) BoundDuty(share float64) *Loop {
	l.duty = share
	return l
}

// pause is how long the loop waits after a pass that took took: until one interval after the pass
// began, or longer under BoundDuty.
func (l *Loop) pause(took time.Duration) time.Duration {
	wait := l.interval - took
	if l.duty > 0 && l.duty < 1 {
		wait = max(wait, time.Duration(float64(took)*(1-l.duty)/l.duty))
	}
	return max(wait, 0)
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
