package proxy

import (
	"math"
	"time"
)

// Retry-After bounds for token-bucket denials, and the fixed value for parked-slot denials.
const (
	minRetryAfter    = 1
	maxRetryAfter    = 60
	parkedRetryAfter = 5
)

// Bucket is a token bucket: it holds up to Burst tokens and refills at Rate tokens per second. It is pure
// (time is passed in) and not safe for concurrent use; callers hold their own lock.
type Bucket struct {
	Rate   float64 // tokens per second; > 0
	Burst  float64 // capacity; >= 1
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket. A burst below 1 becomes max(1, rate): one second's worth.
func NewBucket(rate, burst float64, now time.Time) *Bucket {
	if burst < 1 {
		burst = math.Max(1, rate)
	}
	return &Bucket{Rate: rate, Burst: burst, tokens: burst, last: now}
}

func (b *Bucket) refill(now time.Time) {
	if now.After(b.last) {
		b.tokens = math.Min(b.Burst, b.tokens+now.Sub(b.last).Seconds()*b.Rate)
		b.last = now
	}
}

// Tokens returns the tokens available at now.
func (b *Bucket) Tokens(now time.Time) float64 {
	b.refill(now)
	return b.tokens
}

// Check reports whether n tokens are available at now, without taking them; when not, retryAfter is
// ceil(deficit/rate) clamped to 1..60 seconds. A denial never debits the bucket.
func (b *Bucket) Check(now time.Time, n float64) (ok bool, retryAfter int) {
	b.refill(now)
	if n <= b.tokens {
		return true, 0
	}
	return false, RetryAfter(n-b.tokens, b.Rate)
}

// Take removes n tokens (after a successful Check under the same lock).
func (b *Bucket) Take(now time.Time, n float64) {
	b.refill(now)
	b.tokens -= n
}

// RetryAfter is ceil(deficit/rate) seconds clamped to 1..60. The small epsilon keeps float noise
// (30.0000000001) from rounding a whole number of seconds up.
func RetryAfter(deficit, rate float64) int {
	if rate <= 0 || math.IsNaN(deficit) || math.IsNaN(rate) {
		return maxRetryAfter
	}
	s := math.Ceil(deficit/rate - 1e-9)
	if s < minRetryAfter || math.IsNaN(s) {
		return minRetryAfter
	}
	if s > maxRetryAfter {
		return maxRetryAfter
	}
	return int(s)
}
