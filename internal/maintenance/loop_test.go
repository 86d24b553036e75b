package maintenance

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLoopStartStopStress starts and stops one loop from many goroutines at once (River's
// startstoptest.Stress): every Start either runs the loop or reports it already running, Stop never
// blocks on a loop that is not running, and no goroutine outlives the last Stop (goleak in TestMain).
func TestLoopStartStopStress(t *testing.T) {
	t.Parallel()
	var passes atomic.Int64
	l := NewLoop("stress", time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), func(ctx context.Context) error {
		passes.Add(1)
		return nil
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_ = l.Start(t.Context()) // nil, or "already started" when another goroutine's run is up
				l.Stop()
			}
		})
	}
	wg.Wait()
	l.Stop()

	require.NoError(t, l.Start(t.Context()))
	<-l.Started()
	require.Error(t, l.Start(t.Context()), "a running loop refuses a second Start")
	stopped := l.Stopped()
	l.Stop()
	<-stopped
	l.Stop() // idempotent
	require.Positive(t, passes.Load(), "a started run makes its first pass at once")
	require.Error(t, NewLoop("bad", 0, slog.New(slog.DiscardHandler), nil).Start(t.Context()), "a loop needs a positive interval")
}

// TestLoopBoundDuty: a loop starts its passes one interval apart while they are short, and, under
// BoundDuty, spaces longer passes so that they take at most the given share of the time.
func TestLoopBoundDuty(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	free := NewLoop("free", 10*time.Second, log, nil)
	bound := NewLoop("bound", 10*time.Second, log, nil).BoundDuty(0.1)
	for _, c := range []struct {
		took, free, bound time.Duration
	}{
		{0, 10 * time.Second, 10 * time.Second},
		{200 * time.Millisecond, 9800 * time.Millisecond, 9800 * time.Millisecond},
		{time.Second, 9 * time.Second, 9 * time.Second},
		{5 * time.Second, 5 * time.Second, 45 * time.Second},
		{20 * time.Second, 0, 180 * time.Second},
	} {
		require.Equal(t, c.free, free.pause(c.took), "unbounded after a pass of %v", c.took)
		require.Equal(t, c.bound, bound.pause(c.took), "bounded to 10%% after a pass of %v", c.took)
	}
}
