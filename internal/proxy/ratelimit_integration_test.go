package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestRetryAfter drives the buckets with the injected clock and checks exact Retry-After values, and that
// a denial never debits a bucket.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{})

	t.Run("request bucket", func(t *testing.T) {
		b.plan(t, "req", func(p *proxystore.Plan) { p.RequestRate, p.RequestBurst = 0.25, 2 })
		h, k, _ := b.cluster(t, "req", "req", broker.URL)
		for range 2 {
			require.Equal(t, http.StatusOK, b.do(t, h, k, "GET", "/health", nil).status)
		}
		// Empty bucket, refill 0.25/s: deficit 1 → ceil(1/0.25) = 4 s.
		r := b.do(t, h, k, "GET", "/health", nil)
		requireCode(t, r, 429, "rate_limited")
		require.Equal(t, 4, r.retryAfter(t))
		// 1 s later 0.25 tokens: deficit 0.75 → 3 s. The denials took nothing.
		b.clock.Advance(time.Second)
		require.Equal(t, 3, b.do(t, h, k, "GET", "/health", nil).retryAfter(t))
		b.clock.Advance(3 * time.Second)
		require.Equal(t, http.StatusOK, b.do(t, h, k, "GET", "/health", nil).status)
		require.Equal(t, float64(2), b.metric(t, "queen_proxy_rate_limited_total",
			map[string]string{"cluster": "req", "limiter": "request_rate", "mode": "enforce"}))
	})

	t.Run("message bucket", func(t *testing.T) {
		b.plan(t, "msg", func(p *proxystore.Plan) { p.MessageRate, p.MessageBurst = 10, 100 })
		h, k, _ := b.cluster(t, "msg", "msg", broker.URL)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 100, 10)).status)
		// 50 items, 0 tokens, 10/s → 5 s.
		r := b.do(t, h, k, "POST", "/api/v1/push", items("q", 50, 10))
		msg := requireCode(t, r, 429, "rate_limited")
		require.Equal(t, "message rate limit exceeded", msg)
		require.Equal(t, 5, r.retryAfter(t))
		// 2 s later: 20 tokens, deficit 30 → 3 s (the denied 50 were not debited).
		b.clock.Advance(2 * time.Second)
		require.Equal(t, 3, b.do(t, h, k, "POST", "/api/v1/push", items("q", 50, 10)).retryAfter(t))
		// 20 items fit exactly; then 1 more item: deficit 1 at 10/s → 0.1 s → clamped up to 1.
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 20, 10)).status)
		require.Equal(t, 1, b.do(t, h, k, "POST", "/api/v1/push", items("q", 1, 10)).retryAfter(t))
		// Pops do not spend message tokens.
		require.Equal(t, http.StatusOK, b.do(t, h, k, "GET", "/api/v1/pop/queue/q", nil).status)
	})

	t.Run("a bucket that refills within the 60 s clamp is honest at it", func(t *testing.T) {
		// A plan whose bucket would take longer than the clamped Retry-After to refill is refused, so the
		// clamp never sends a client back to be refused again.
		_, err := proxy.CreatePlan(t.Context(), b.store, proxystore.Plan{Name: "slow", MessageRate: 1, MessageBurst: 100})
		require.ErrorContains(t, err, "messageBurst 100 refills in 100 s at messageRate 1: it must refill within 60 s")
		b.plan(t, "slowest", func(p *proxystore.Plan) { p.MessageRate, p.MessageBurst = 1, 60 })
		h, k, _ := b.cluster(t, "slowmsg", "slowest", broker.URL)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 60, 10)).status)
		r := b.do(t, h, k, "POST", "/api/v1/push", items("q", 60, 10))
		require.Equal(t, 60, r.retryAfter(t), "60 tokens at 1/s")
		b.clock.Advance(59 * time.Second)
		requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q", 60, 10)), 429, "rate_limited")
		b.clock.Advance(time.Second)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 60, 10)).status)
	})

	t.Run("push above the burst is 413", func(t *testing.T) {
		// Rate 2/s, burst 4: a push of 6 can never be admitted, so it is not told to retry.
		b.plan(t, "burst", func(p *proxystore.Plan) { p.MessageRate, p.MessageBurst = 2, 4 })
		h, k, _ := b.cluster(t, "burst", "burst", broker.URL)
		for range 2 {
			msg := requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q", 6, 10)), 413, "payload_too_large")
			require.Equal(t, "batch of 6 items exceeds the plan's message burst (4)", msg)
			b.clock.Advance(time.Minute)
		}
		// The refusals took nothing: the full burst passes, then the next push waits exactly its
		// Retry-After.
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 4, 10)).status)
		r := b.do(t, h, k, "POST", "/api/v1/push", items("q", 3, 10))
		require.Equal(t, 2, requireRetry(t, r))
		b.clock.Advance(2 * time.Second)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 3, 10)).status)
	})

	t.Run("parked slots", func(t *testing.T) {
		arrived := make(chan struct{}, 4)
		release := make(chan struct{})
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(up.Close)
		b.plan(t, "parked", func(p *proxystore.Plan) { p.ParkedSlots = 1 })
		h, k, _ := b.cluster(t, "parked", "parked", up.URL)
		done := make(chan resp, 1)
		go func() { done <- b.do(t, h, k, "GET", "/api/v1/pop/queue/q?wait=true&timeout=5000", nil) }()
		<-arrived
		r := b.do(t, h, k, "GET", "/api/v1/pop/queue/q?wait=true&timeout=5000", nil)
		msg := requireCode(t, r, 429, "rate_limited")
		require.Equal(t, "too many parked consumers", msg)
		require.Equal(t, 5, r.retryAfter(t))
		// A pop that does not wait needs no slot.
		go func() { <-arrived }()
		close(release)
		require.Equal(t, http.StatusNoContent, b.do(t, h, k, "GET", "/api/v1/pop/queue/q", nil).status)
		require.Equal(t, http.StatusNoContent, (<-done).status)
		// The slot was freed.
		require.Equal(t, http.StatusNoContent, b.do(t, h, k, "GET", "/api/v1/pop/queue/q?wait=true&timeout=10", nil).status)
	})
}

// TestShadowMode shows a shadow-mode rate denial forwarded (logged and counted) while the hard quota gate
// still refuses.
func TestShadowMode(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{shadow: true})
	b.plan(t, "tight", func(p *proxystore.Plan) {
		p.RequestRate, p.RequestBurst = 1, 1
		p.MonthlyMessageQuota = 2
	})
	h, k, _ := b.cluster(t, "shadowed", "tight", broker.URL)

	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 1, 10)).status)
	// The bucket is empty: enforce mode would answer 429; shadow mode forwards.
	r := b.do(t, h, k, "POST", "/api/v1/push", items("q", 1, 10))
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Empty(t, r.header.Get("Retry-After"))
	require.Equal(t, float64(1), b.metric(t, "queen_proxy_rate_limited_total",
		map[string]string{"cluster": "shadowed", "limiter": "request_rate", "mode": "shadow"}))
	require.Contains(t, b.logs.String(), `msg="proxy shadow denial forwarded" cluster=shadowed code=rate_limited`)

	// The monthly quota (2 messages) is now used up: a hard 403 even in shadow mode.
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q", 1, 10)), 403, "quota_exceeded")

	// The shadow denial took no token: one second refills exactly the one token the next request needs,
	// so it is admitted without a further denial (a debited bucket would still be empty).
	b.clock.Advance(time.Second)
	require.Equal(t, http.StatusOK, b.do(t, h, k, "GET", "/api/v1/pop/queue/q?batch=5", nil).status)
	require.Equal(t, float64(1), b.metric(t, "queen_proxy_rate_limited_total",
		map[string]string{"cluster": "shadowed", "limiter": "request_rate", "mode": "shadow"}))
}
