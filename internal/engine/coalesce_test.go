package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gate is a coalescer exec that records its batches and holds each one until released.
type gate struct {
	mu      sync.Mutex
	batches [][]int
	running int
	most    int // most batches running at once
	entered chan []int
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan []int, 16), release: make(chan struct{})} }

func (g *gate) exec(_ context.Context, reqs []int) ([]int, error) {
	b := append([]int(nil), reqs...)
	g.mu.Lock()
	g.batches = append(g.batches, b)
	g.running++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	g.entered <- b
	<-g.release
	g.mu.Lock()
	g.running--
	g.mu.Unlock()
	out := make([]int, len(reqs))
	for i, r := range reqs {
		if r == 99 {
			panic("ninety-nine")
		}
		if r < 0 {
			return nil, errors.New("negative")
		}
		out[i] = r * 10
	}
	return out, nil
}

type answer struct{ req, resp int }

// gated builds a started coalescer over a new gate (each request of size 1; sharded by shard unless it
// is nil) and the channels submit answers on.
func gated(t *testing.T, slots, maxItems int, shard func(int) uint64) (*gate, *coalescer[int, int], chan answer, chan error) {
	g := newGate()
	c := newCoalescer(slots, maxItems, func(int) int { return 1 }, g.exec)
	if shard != nil {
		c.sharded(slots, 1, shard)
	}
	c.start(t.Context())
	return g, c, make(chan answer, 8), make(chan error, 8)
}

// submit runs do in a goroutine; its answer arrives on out.
func submit(c *coalescer[int, int], ctx context.Context, req int, out chan<- answer, errs chan<- error) {
	go func() {
		resp, err := c.do(ctx, req)
		if err != nil {
			errs <- err
			return
		}
		out <- answer{req, resp}
	}()
}

// untilWaiting returns once n requests wait in the shard's queue (their callers found no slot free).
func untilWaiting(t *testing.T, c *coalescer[int, int], shard, n int) {
	t.Helper()
	q := c.shards[shard]
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.waiting) == n
	}, time.Minute, time.Millisecond)
}

// TestCoalescer: a request that finds a slot free runs its batch at once; what arrives meanwhile waits
// and goes into one batch (up to maxItems, always at least one request); the slots bound the batches
// running at once, per shard when sharded; a merged batch that fails is retried request by request.
func TestCoalescer(t *testing.T) {
	t.Parallel()

	t.Run("merges what waits", func(t *testing.T) {
		t.Parallel()
		g, c, out, errs := gated(t, 1, 2, nil)
		submit(c, t.Context(), 1, out, errs)
		require.Equal(t, []int{1}, <-g.entered, "a lone request runs at once")
		for i, r := range []int{2, 3, 4} {
			submit(c, t.Context(), r, out, errs)
			untilWaiting(t, c, 0, i+1) // queued in this order
		}
		g.release <- struct{}{}
		require.Equal(t, answer{1, 10}, <-out, "the first caller is answered while others still wait")
		require.Equal(t, []int{2, 3}, <-g.entered, "the waiting requests merge, up to maxItems")
		g.release <- struct{}{}
		require.Equal(t, []int{4}, <-g.entered)
		g.release <- struct{}{}
		got := map[int]int{}
		for range 3 {
			a := <-out
			got[a.req] = a.resp
		}
		require.Equal(t, map[int]int{2: 20, 3: 30, 4: 40}, got)
		c.wait()
		require.Equal(t, 1, g.most)
		require.Empty(t, errs)
	})

	t.Run("slots", func(t *testing.T) {
		t.Parallel()
		g, c, out, errs := gated(t, 2, 10, nil)
		submit(c, t.Context(), 1, out, errs)
		<-g.entered
		submit(c, t.Context(), 2, out, errs)
		<-g.entered // a second slot: runs beside the first
		submit(c, t.Context(), 3, out, errs)
		untilWaiting(t, c, 0, 1)
		g.release <- struct{}{}
		require.Equal(t, []int{3}, <-g.entered)
		g.release <- struct{}{}
		g.release <- struct{}{}
		for range 3 {
			<-out
		}
		c.wait()
		require.Equal(t, 2, g.most)
	})

	t.Run("sharded", func(t *testing.T) {
		t.Parallel()
		g, c, out, errs := gated(t, 2, 10, func(r int) uint64 { return uint64(r % 2) })
		submit(c, t.Context(), 2, out, errs)
		<-g.entered
		submit(c, t.Context(), 4, out, errs) // same shard: waits although a slot of the other is free
		untilWaiting(t, c, 0, 1)
		submit(c, t.Context(), 1, out, errs)
		require.Equal(t, []int{1}, <-g.entered, "the other shard runs beside it")
		g.release <- struct{}{}
		g.release <- struct{}{}
		require.Equal(t, []int{4}, <-g.entered)
		g.release <- struct{}{}
		for range 3 {
			<-out
		}
		c.wait()
	})

	t.Run("a light load fills the first shard", func(t *testing.T) {
		t.Parallel()
		g := newGate()
		c := newCoalescer(2, 10, func(int) int { return 1 }, g.exec).sharded(2, 3, func(r int) uint64 { return uint64(r) })
		c.start(t.Context())
		out, errs := make(chan answer, 8), make(chan error, 8)
		submit(c, t.Context(), 1, out, errs)
		require.Equal(t, []int{1}, <-g.entered)
		submit(c, t.Context(), 2, out, errs)
		untilWaiting(t, c, 0, 1) // a new key: the first shard is not full, though the second is idle
		submit(c, t.Context(), 3, out, errs)
		untilWaiting(t, c, 0, 2)
		submit(c, t.Context(), 4, out, errs)
		require.Equal(t, []int{4}, <-g.entered, "the first shard is full: a new key goes to the next")
		submit(c, t.Context(), 2, out, errs)
		untilWaiting(t, c, 0, 3) // key 2 is in flight on the first shard: it stays there

		stop := make(chan struct{})
		go func() {
			for {
				select {
				case g.release <- struct{}{}:
				case <-stop:
					return
				}
			}
		}()
		for range 5 {
			<-out
		}
		c.wait()
		close(stop)
		require.ElementsMatch(t, [][]int{{1}, {4}, {2, 3, 2}}, g.batches)
		require.Empty(t, c.route.keys, "answered keys are forgotten")
		require.Equal(t, []int{0, 0}, c.route.load)
		require.Empty(t, errs)
	})

	t.Run("a caller that leaves", func(t *testing.T) {
		t.Parallel()
		early, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := newCoalescer(1, 10, func(int) int { return 1 }, newGate().exec).do(early, 7)
		require.ErrorIs(t, err, context.Canceled, "before start, a request waits for it or for its context")

		g, c, out, errs := gated(t, 1, 10, nil)
		submit(c, t.Context(), 1, out, errs)
		<-g.entered
		ctx, cancel := context.WithCancel(t.Context())
		submit(c, ctx, 2, out, errs)
		untilWaiting(t, c, 0, 1)
		cancel()
		require.ErrorIs(t, <-errs, context.Canceled)
		g.release <- struct{}{}
		require.Equal(t, []int{2}, <-g.entered, "a queued request still runs: nothing may write it twice")
		g.release <- struct{}{}
		require.Equal(t, answer{1, 10}, <-out)
		c.wait()
	})

	t.Run("a failed batch is retried alone", func(t *testing.T) {
		t.Parallel()
		g, c, out, errs := gated(t, 1, 10, nil)
		submit(c, t.Context(), 1, out, errs)
		<-g.entered
		submit(c, t.Context(), 2, out, errs)
		untilWaiting(t, c, 0, 1)
		submit(c, t.Context(), -3, out, errs)
		untilWaiting(t, c, 0, 2)
		g.release <- struct{}{}
		require.Equal(t, []int{2, -3}, <-g.entered)
		g.release <- struct{}{}
		for range 2 {
			<-g.entered
			g.release <- struct{}{}
		}
		// Caller 1 may send its answer after caller 2: each sends from its own goroutine.
		require.ElementsMatch(t, []answer{{1, 10}, {2, 20}}, []answer{<-out, <-out})
		require.ErrorContains(t, <-errs, "negative")
		c.wait()
	})

	t.Run("a batch that panics", func(t *testing.T) {
		t.Parallel()
		g, c, out, errs := gated(t, 1, 10, nil)
		panicked := make(chan any, 1)
		go func() {
			defer func() { panicked <- recover() }()
			_, _ = c.do(t.Context(), 99) // finds the slot free: runs its batch, which panics
		}()
		require.Equal(t, []int{99}, <-g.entered)
		g.release <- struct{}{}
		require.Equal(t, "ninety-nine", <-panicked, "the panic goes on in the caller's goroutine")
		submit(c, t.Context(), 3, out, errs)
		require.Equal(t, []int{3}, <-g.entered, "the slot is free again")
		g.release <- struct{}{}
		require.Equal(t, answer{3, 30}, <-out)
		c.wait()
	})
}

// TestCoalescerEveryCallerGetsItsAnswer: with several slots, a caller that takes a slot may find its
// request already taken into another slot's batch; it must still return that batch's answer for it.
func TestCoalescerEveryCallerGetsItsAnswer(t *testing.T) {
	t.Parallel()
	c := newCoalescer(2, 1000, func(int) int { return 1 }, func(_ context.Context, reqs []int) ([]int, error) {
		out := make([]int, len(reqs))
		for i, r := range reqs {
			out[i] = r * 10
		}
		return out, nil
	})
	c.start(t.Context())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wrong []int
	for g := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				req := g*10000 + i + 1
				resp, err := c.do(t.Context(), req)
				if err != nil || resp != req*10 {
					mu.Lock()
					wrong = append(wrong, req)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	c.wait()
	require.Empty(t, wrong, "callers answered with another's answer or none")
}
