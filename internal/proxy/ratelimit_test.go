package proxy

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryAfterFormula(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		deficit, rate float64
		want          int
	}{
		{1, 2, 1},    // 0.5 s rounds up to the 1 s floor
		{1, 0.25, 4}, // ceil(4)
		{30, 10, 3},  // exact, no float drift upwards
		{30.0000001, 10, 4},
		{0.75, 0.25, 3},
		{100, 1, 60}, // clamped
		{1e12, 1e-9, 60},
		{0, 5, 1},
		{5, 0, 60}, // no refill at all
		{math.NaN(), 1, 60},
	} {
		require.Equal(t, tc.want, RetryAfter(tc.deficit, tc.rate), "deficit %v rate %v", tc.deficit, tc.rate)
	}
}

func TestBucketDenialNeverDebits(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	b := NewBucket(10, 100, t0)
	ok, _ := b.Check(t0, 100)
	require.True(t, ok)
	b.Take(t0, 100)
	for range 5 {
		ok, ra := b.Check(t0, 50)
		require.False(t, ok)
		require.Equal(t, 5, ra)
	}
	t1 := t0.Add(5 * time.Second)
	ok, _ = b.Check(t1, 50)
	require.True(t, ok, "denials must not have taken tokens")
	// Refill is capped at the burst, and a clock going backwards refills nothing.
	require.InDelta(t, 100, b.Tokens(t0.Add(time.Hour)), 1e-9)
	require.InDelta(t, 100, b.Tokens(t0), 1e-9)
	// A zero burst means one second's worth, at least one token.
	require.InDelta(t, 1, NewBucket(0.5, 0, t0).Burst, 0)
	require.InDelta(t, 20, NewBucket(20, 0, t0).Burst, 0)
}

func TestAdmitTakesAllOrNothing(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	cl := &clusterLimits{params: limitParams{slots: 1}, req: NewBucket(1, 5, t0), msg: NewBucket(10, 10, t0)}
	// The message bucket refuses 11 items: the request bucket keeps its 5 tokens.
	_, d := cl.admit(t0, 11, false)
	require.Equal(t, &denial{limiterMessages, 1}, d)
	require.InDelta(t, 5, cl.req.Tokens(t0), 1e-9)
	release, d := cl.admit(t0, 0, true)
	require.Nil(t, d)
	_, d = cl.admit(t0, 0, true)
	require.Equal(t, &denial{limiterParked, parkedRetryAfter}, d)
	require.InDelta(t, 4, cl.req.Tokens(t0), 1e-9, "the slot denial took no request token")
	release()
	release() // idempotent
	require.Equal(t, 0, cl.parked)
}

func FuzzRetryAfter(f *testing.F) {
	f.Add(1.0, 2.0)
	f.Add(100.0, 1.0)
	f.Add(0.0, 0.0)
	f.Add(-1.0, 3.0)
	f.Fuzz(func(t *testing.T, deficit, rate float64) {
		ra := RetryAfter(deficit, rate)
		if ra < 1 || ra > 60 {
			t.Fatalf("RetryAfter(%v, %v) = %d, outside 1..60", deficit, rate, ra)
		}
	})
}

func FuzzBucket(f *testing.F) {
	f.Add(10.0, 100.0, int64(1000), 50.0)
	f.Add(0.5, 0.0, int64(-5), 1.0)
	f.Fuzz(func(t *testing.T, rate, burst float64, stepMs int64, n float64) {
		if !(rate > 0 && rate < 1e9) || math.IsNaN(burst) || burst > 1e12 || !(n >= 0 && n < 1e12) {
			t.Skip()
		}
		t0 := time.Unix(1_700_000_000, 0)
		b := NewBucket(rate, burst, t0)
		now := t0.Add(time.Duration(stepMs) * time.Millisecond)
		before := b.Tokens(now)
		ok, ra := b.Check(now, n)
		if !ok {
			if ra < 1 || ra > 60 {
				t.Fatalf("retry after %d", ra)
			}
			if b.Tokens(now) != before {
				t.Fatal("a denial debited the bucket")
			}
		}
		if before > b.Burst+1e-9 {
			t.Fatalf("tokens %v above burst %v", before, b.Burst)
		}
	})
}
