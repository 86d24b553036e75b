package proxy

import (
	"fmt"
	"math"
	"time"
)

// Retry-After bounds for token-bucket denials, and the fixed value for parked-slot denials. The 1..60 s
// clamp is the documented contract (errors-backpressure-retries: "clamped to between 1 and 60 seconds").
// It stays honest, waiting that long admits the same request, because no plan may hold a bucket that
// takes longer than maxRetryAfter to refill from empty (CheckBucketRefill) and a request above the burst
// is a 413, never a 429.
const (
	minRetryAfter    = 1
	maxRetryAfter    = 60
	parkedRetryAfter = 5
)

// slack is the float tolerance, in seconds of refill, shared by Check and RetryAfter: RetryAfter rounds
// a deficit of 30.0000000001 tokens at 10/s down to 3 s, and Check admits after those 3 s what is then
// short by that much.
const slack = 1e-9

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
	return &Bucket{Rate: rate, Burst: effectiveBurst(rate, burst), tokens: effectiveBurst(rate, burst), last: now}
}

// effectiveBurst is a plan's burst as a bucket holds it: 0 (or below 1) is one second's worth, at least 1.
func effectiveBurst(rate, burst float64) float64 {
	if burst < 1 {
		return math.Max(1, rate)
	}
	return burst
}

// CheckBucketRefill refuses a limit (rate > 0) whose bucket takes more than maxRetryAfter seconds to
// refill from empty: a denied request that fits the burst must be admitted within the clamped
// Retry-After. what names the plan fields in the message.
func CheckBucketRefill(what string, rate, burst float64) error {
	if rate <= 0 {
		return nil // unlimited
	}
	if b := effectiveBurst(rate, burst); b/rate > maxRetryAfter {
		return fmt.Errorf("%sBurst %g refills in %g s at %sRate %g: it must refill within %d s (burst at most %d × rate), "+
			"because a Retry-After is at most %d s", what, b, b/rate, what, rate, maxRetryAfter, maxRetryAfter, maxRetryAfter)
	}
	return nil
}

func (b *Bucket) refill(now time.Time) {
	if now.After(b.last) {
		b.tokens = b.after(now.Sub(b.last))
		b.last = now
	}
}

// after is the token count d from the last refill: the one formula both refill and the Retry-After
// check use, so that the check's arithmetic is the refill's to the last bit.
func (b *Bucket) after(d time.Duration) float64 {
	return math.Min(b.Burst, b.tokens+d.Seconds()*b.Rate)
}

// admits reports whether tokens cover n, up to the float slack.
func (b *Bucket) admits(tokens, n float64) bool { return n-tokens <= slack*b.Rate }

// Tokens returns the tokens available at now.
func (b *Bucket) Tokens(now time.Time) float64 {
	b.refill(now)
	return b.tokens
}

// Check reports whether n tokens are available at now, without taking them; when not, retryAfter is
// ceil(deficit/rate) seconds clamped to 1..60. A denial never debits the bucket. A request of more than
// Burst tokens is never admitted: callers refuse it before asking (see Fits).
func (b *Bucket) Check(now time.Time, n float64) (ok bool, retryAfter int) {
	b.refill(now)
	if b.admits(b.tokens, n) {
		return true, 0
	}
	ra := RetryAfter(n-b.tokens, b.Rate)
	// The formula's rounding may leave the refill a hair short; one more second then makes it honest.
	for b.Fits(n) && ra < maxRetryAfter && !b.admits(b.after(time.Duration(ra)*time.Second), n) {
		ra++
	}
	return false, ra
}

// Fits reports whether n tokens can ever be available at once, that is n <= Burst.
func (b *Bucket) Fits(n float64) bool { return n <= b.Burst }

// Take removes n tokens (after a successful Check under the same lock).
func (b *Bucket) Take(now time.Time, n float64) {
	b.refill(now)
	b.tokens -= n
}

// RetryAfter is ceil(deficit/rate) seconds clamped to 1..60. The slack keeps float noise (30.0000000001)
// from rounding a whole number of seconds up; Check admits the same noise.
func RetryAfter(deficit, rate float64) int {
	if rate <= 0 || math.IsNaN(deficit) || math.IsNaN(rate) {
		return maxRetryAfter
	}
	s := math.Ceil(deficit/rate - slack)
	if s < minRetryAfter || math.IsNaN(s) {
		return minRetryAfter
	}
	if s > maxRetryAfter {
		return maxRetryAfter
	}
	return int(s)
}
