package maintenance

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// passReplayer reports each replay pass on a channel; wake is what a spooled push signals.
type passReplayer struct {
	passes chan struct{}
	wake   chan struct{}
}

func (r *passReplayer) ReplaySpool(ctx context.Context) error {
	select {
	case r.passes <- struct{}{}:
	case <-ctx.Done(): // the stress test does not read them: Stop ends the wait
	}
	return nil
}

func (r *passReplayer) SpoolWake() <-chan struct{} { return r.wake }

func TestSpoolReplayStartStopStress(t *testing.T) {
	t.Parallel()
	r := &passReplayer{passes: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
	l := NewSpoolReplay(r, slog.New(slog.DiscardHandler), time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				_ = l.Start(t.Context()) // nil, or "already started" when another goroutine's run is up
				select {
				case r.wake <- struct{}{}:
				default:
				}
				l.Stop()
			}
		})
	}
	wg.Wait()
	l.Stop()
	require.NoError(t, l.Start(t.Context()))
	require.Error(t, l.Start(t.Context()), "a running loop refuses a second Start")
	l.Stop()
	l.Stop() // idempotent
}

// TestSpoolReplayRunsWhenWoken: with an interval that never comes, a pass runs at Start and then only
// when a spooled push wakes the loop.
func TestSpoolReplayRunsWhenWoken(t *testing.T) {
	t.Parallel()
	r := &passReplayer{passes: make(chan struct{}), wake: make(chan struct{}, 1)}
	l := NewSpoolReplay(r, slog.New(slog.DiscardHandler), time.Hour)
	require.NoError(t, l.Start(t.Context()))
	defer l.Stop()
	<-r.passes // the first pass, at once
	for range 3 {
		r.wake <- struct{}{}
		<-r.passes
	}
}
