package proxy_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestQuotaAcrossProxies: two proxy instances (separate listeners and pools) share one database; 60
// concurrent single-item pushes against a monthly quota of 5 are admitted exactly 5 times, and the
// broker stores exactly 5 messages.
func TestQuotaAcrossProxies(t *testing.T) {
	t.Parallel()
	const quota, pushes = 5, 60
	broker := testenv.StartBroker(t, brokerEnv())
	a := newBundle(t, bundleOpts{})
	b := newBundle(t, bundleOpts{storeURL: a.dbURL})
	a.plan(t, "small", func(p *proxystore.Plan) { p.MonthlyMessageQuota = quota })
	h, k, _ := a.cluster(t, "acme", "small", broker.URL)

	statuses := make(chan resp, pushes)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range pushes {
		px := []*testBundle{a, b}[i%2]
		wg.Go(func() {
			<-start
			statuses <- px.do(t, h, k, "POST", "/api/v1/push", items("metered", 1, 10))
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	accepted := 0
	for r := range statuses {
		if r.status == http.StatusCreated {
			accepted++
			continue
		}
		requireCode(t, r, http.StatusForbidden, "quota_exceeded")
	}
	require.Equal(t, quota, accepted)

	r := a.do(t, h, k, "GET", "/api/v1/pop/queue/metered?batch=100", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var popped struct {
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(r.body, &popped))
	require.Len(t, popped.Messages, quota, "the broker stored exactly the quota")
	cid, err := a.store.ClusterIDByName(t.Context(), "acme")
	require.NoError(t, err)
	used, err := a.store.MonthlyMessages(t.Context(), cid, proxystore.Month(a.clock.Now()))
	require.NoError(t, err)
	require.Equal(t, int64(quota), used)
}

// TestQuotaReleasedWhenRefused: a push reserves its messages before it is forwarded; when it goes no
// further (the rate limiter, or the broker refusing it) the reservation is given back.
func TestQuotaReleasedWhenRefused(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{})
	b.plan(t, "p", func(p *proxystore.Plan) {
		p.MonthlyMessageQuota = 2
		p.RequestRate, p.RequestBurst = 1, 1
	})
	h, k, _ := b.cluster(t, "acme", "p", broker.URL)

	// The broker refuses an item without a queue (400): nothing is counted.
	bad := map[string]any{"items": []map[string]any{{"queue": "", "payload": 1}, {"queue": "", "payload": 2}}}
	r := b.do(t, h, k, "POST", "/api/v1/push", bad)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	// The request bucket is empty: the 429 gives its reservation back too.
	require.Equal(t, 1, requireRetry(t, b.do(t, h, k, "POST", "/api/v1/push", items("q", 2, 10))))
	b.clock.Advance(time.Second)
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q", 2, 10)).status)
	b.clock.Advance(time.Second)
	msg := requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q", 1, 10)), 403, "quota_exceeded")
	require.Equal(t, "monthly message quota exhausted (2 used of 2)", msg)
}
