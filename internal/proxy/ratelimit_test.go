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
		{100, 1, 60}, // clamped (no valid plan needs more: TestCheckBucketRefill)
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
	cl.msg.Take(t0, 5)
	// The message bucket refuses 6 items (5 left): the request bucket keeps its 5 tokens.
	_, d := cl.admit(t0, 6, false)
	require.Equal(t, &denial{limiter: limiterMessages, retryAfter: 1}, d)
	require.InDelta(t, 5, cl.req.Tokens(t0), 1e-9)
	require.InDelta(t, 5, cl.msg.Tokens(t0), 1e-9)
	release, d := cl.admit(t0, 0, true)
	require.Nil(t, d)
	_, d = cl.admit(t0, 0, true)
	require.Equal(t, &denial{limiter: limiterParked, retryAfter: parkedRetryAfter}, d)
	require.InDelta(t, 4, cl.req.Tokens(t0), 1e-9, "the slot denial took no request token")
	release()
	release() // idempotent
	require.Equal(t, 0, cl.parked)
}

// TestAdmitBeyondBurst: a push of more items than the message burst can never be admitted, so it is
// refused as too large (whatever the bucket holds) rather than told to retry.
func TestAdmitBeyondBurst(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	cl := &clusterLimits{msg: NewBucket(2, 4, t0)}
	for _, at := range []time.Time{t0, t0.Add(time.Hour)} {
		_, d := cl.admit(at, 6, false)
		require.Equal(t, &denial{limiter: limiterMessages, tooLarge: true, burst: 4}, d)
	}
	require.InDelta(t, 4, cl.msg.Tokens(t0.Add(time.Hour)), 1e-9, "the refusal took nothing")
	_, d := cl.admit(t0.Add(time.Hour), 4, false)
	require.Nil(t, d, "a push of exactly the burst fits")
}

func FuzzRetryAfter(f *testing.F) {
	f.Add(1.0, 2.0)
	f.Add(100.0, 1.0)
	f.Add(0.0, 0.0)
	f.Add(-1.0, 3.0)
	f.Add(30.0000000001, 10.0)
	f.Fuzz(func(t *testing.T, deficit, rate float64) {
		ra := RetryAfter(deficit, rate)
		if ra < minRetryAfter || ra > maxRetryAfter {
			t.Fatalf("RetryAfter(%v, %v) = %d, outside %d..%d", deficit, rate, ra, minRetryAfter, maxRetryAfter)
		}
	})
}

// FuzzBucket checks a bucket's invariants, and that every Retry-After is honest: a request that fits the
// burst and is denied is admitted once that many seconds have passed.
func FuzzBucket(f *testing.F) {
	f.Add(10.0, 100.0, int64(1000), 50.0, 80.0)
	f.Add(0.5, 0.0, int64(-5), 1.0, 0.0)
	f.Add(2.0, 4.0, int64(0), 4.0, 4.0)
	f.Add(3.0, 7.0, int64(333), 7.0, 6.5)
	f.Fuzz(func(t *testing.T, rate, burst float64, stepMs int64, n, taken float64) {
		if !(rate >= 1e-3 && rate < 1e9) || math.IsNaN(burst) || burst > 1e12 || !(n >= 0 && n < 1e12) ||
			!(taken >= 0 && taken < 1e12) || stepMs < -1e9 || stepMs > 1e9 || CheckBucketRefill("message", rate, burst) != nil {
			return // outside the plans the admin API accepts
		}
		t0 := time.Unix(1_700_000_000, 0)
		b := NewBucket(rate, burst, t0)
		if ok, _ := b.Check(t0, taken); ok {
			b.Take(t0, taken)
		}
		now := t0.Add(time.Duration(stepMs) * time.Millisecond)
		before := b.Tokens(now)
		if before > b.Burst+1e-9 {
			t.Fatalf("tokens %v above burst %v", before, b.Burst)
		}
		ok, ra := b.Check(now, n)
		if ok {
			return
		}
		if ra < minRetryAfter {
			t.Fatalf("retry after %d", ra)
		}
		if b.Tokens(now) != before {
			t.Fatal("a denial debited the bucket")
		}
		if b.Fits(n) && stepMs >= 0 { // a clock gone backwards refills nothing until it is back
			later := now.Add(time.Duration(ra) * time.Second)
			if ok, again := b.Check(later, n); !ok {
				t.Fatalf("Retry-After %d s was not honest: %v tokens needed, %v after the wait (retry after %d)",
					ra, n, b.Tokens(later), again)
			}
		}
	})
}

func TestCheckBucketRefill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate, burst float64
		ok          bool
	}{
		{0, 1e9, true},      // no limit
		{1, 60, true},       // refills in exactly 60 s
		{1, 61, false},      // 61 s
		{1, 100, false},     // the 100 s bucket whose clamped Retry-After would not admit
		{0.01, 0, false},    // burst 0 is one token, 100 s at this rate
		{1.0 / 60, 0, true}, // one token a minute
		{2, 4, true},
	} {
		err := CheckBucketRefill("message", tc.rate, tc.burst)
		require.Equal(t, tc.ok, err == nil, "rate %v burst %v: %v", tc.rate, tc.burst, err)
		if err != nil {
			require.ErrorContains(t, err, "messageBurst")
			require.ErrorContains(t, err, "within 60 s")
		}
	}
}
