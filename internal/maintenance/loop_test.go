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
