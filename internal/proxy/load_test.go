package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// TestLoadHoldsRequestRate hammers the proxy on loopback for 20 s with three times the plan's request
// rate and checks that the admitted rate is the configured one within ±5%, and that every excess request
// is a 429 rate_limited with a valid Retry-After.
//
// It is deliberately not parallel: Go runs it alone, before the package's parallel tests resume, so the
// offered load is not starved by them. The upstream is a stub so that only the proxy (its PostgreSQL
// lookups and limiter) is measured; the broker path is covered by the other tests.
func TestLoadHoldsRequestRate(t *testing.T) {
	if testing.Short() {
		t.Skip("20 s load test: make test runs it alone, after the parallel suite")
	}
	const (
		rate     = 50.0 // requests per second
		burst    = 10.0 // 200 ms of scheduling jitter is absorbed rather than lost
		offered  = 3 * rate
		duration = 20 * time.Second
		workers  = 32
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(up.Close)
	b := newBundle(t, bundleOpts{realClock: true})
	b.plan(t, "load", func(p *proxystore.Plan) { p.RequestRate, p.RequestBurst = rate, burst })
	h, k, _ := b.cluster(t, "load", "load", up.URL)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}

	var ok, limited, other atomic.Int64
	var badRetry atomic.Value
	start := time.Now()
	deadline := start.Add(duration)
	// A ticker paces the offered load at 3x the limit, bounded by the worker count.
	ticks := make(chan struct{})
	go func() {
		defer close(ticks)
		tk := time.NewTicker(time.Second / time.Duration(offered))
		defer tk.Stop()
		for now := range tk.C {
			if now.After(deadline) {
				return
			}
			select {
			case ticks <- struct{}{}:
			default: // every worker is busy: the tick is dropped, the offered load stays bounded
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range ticks {
				req, err := http.NewRequestWithContext(t.Context(), "GET", b.url+"/health", nil)
				if err != nil {
					other.Add(1)
					return
				}
				req.Host = h
				req.Header.Set("Authorization", "Bearer "+k)
				res, err := client.Do(req)
				if err != nil {
					other.Add(1)
					continue
				}
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					limited.Add(1)
					if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
						badRetry.Store(res.Header.Get("Retry-After"))
					}
				default:
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	expected := burst + rate*elapsed
	t.Logf("%.1f s: %d admitted (expected %.0f), %d limited, %d other", elapsed, ok.Load(), expected, limited.Load(), other.Load())
	require.Zero(t, other.Load(), "every request is either admitted or a 429")
	require.Nil(t, badRetry.Load(), "invalid Retry-After")
	require.Greater(t, limited.Load(), ok.Load()/10, "the load must exceed the rate for the test to mean anything")
	require.InEpsilon(t, expected, float64(ok.Load()), 0.05)
	require.Equal(t, float64(limited.Load()), b.metric(t, "queen_proxy_decisions_total",
		map[string]string{"cluster": "load", "code": "rate_limited"}))
}
