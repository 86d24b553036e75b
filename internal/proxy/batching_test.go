package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestCredentialCache: a resolved key is reused for the cache's TTL, so a revocation made elsewhere
// (here straight in the database, as another instance or the CLI would) applies once the TTL has passed;
// one made through this instance's admin API applies at once.
func TestCredentialCache(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{cacheTTL: 2 * time.Second})
	b.plan(t, "basic", nil)
	h, k, id := b.cluster(t, "acme", "basic", broker.URL)
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("c", 1, 10)).status)

	require.NoError(t, b.store.RevokeKey(t.Context(), id))
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("c", 1, 10)).status,
		"within the TTL the cached key still serves")
	b.clock.Advance(2 * time.Second)
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("c", 1, 10)), 401, "unauthorized")

	_, k2, err := proxyCreateKey(t, b, "acme", "read-write")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, b.do(t, h, k2, "POST", "/api/v1/push", items("c", 1, 10)).status)
	require.Equal(t, http.StatusOK, b.admin(t, "PATCH", "/_proxy/admin/clusters/acme", map[string]any{"state": "suspended"}).status)
	requireCode(t, b.do(t, h, k2, "POST", "/api/v1/push", items("c", 1, 10)), 403, "cluster_suspended")

	// A cached session is not served past its own end, however long the cache would keep it.
	require.Equal(t, http.StatusOK, b.admin(t, "PATCH", "/_proxy/admin/clusters/acme", map[string]any{"state": "active"}).status)
	_, tok, err := proxy.CreateSession(t.Context(), b.store, "acme", "dash", []string{"read-write"}, b.clock.Now().Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, b.do(t, h, tok, "POST", "/api/v1/push", items("c", 1, 10)).status)
	b.clock.Advance(time.Second)
	requireCode(t, b.do(t, h, tok, "POST", "/api/v1/push", items("c", 1, 10)), 401, "unauthorized")
}

// TestQuotaBlocksAcrossProxies: two instances reserving quota in blocks and writing usage once per
// interval still never admit more than the quota between them; once both have shut down (giving back
// what they held), the counter equals what the broker stored, and the bytes were counted.
func TestQuotaBlocksAcrossProxies(t *testing.T) {
	t.Parallel()
	const quota, pushes, per, block = 1000, 150, 10, 100
	broker := testenv.StartBroker(t, brokerEnv())
	o := bundleOpts{quotaBlock: block, usageFlush: 50 * time.Millisecond, cacheTTL: time.Second}
	a := newBundle(t, o)
	o.storeURL = a.dbURL
	b := newBundle(t, o)
	a.plan(t, "metered", func(p *proxystore.Plan) { p.MonthlyMessageQuota = quota })
	h, k, _ := a.cluster(t, "acme", "metered", broker.URL)

	var accepted sync.Map
	var wg sync.WaitGroup
	for i := range pushes {
		px := []*testBundle{a, b}[i%2]
		wg.Go(func() {
			r := px.do(t, h, k, "POST", "/api/v1/push", items("blocks", per, 10))
			if r.status == http.StatusCreated {
				accepted.Store(i, true)
				return
			}
			requireCode(t, r, http.StatusForbidden, "quota_exceeded")
		})
	}
	wg.Wait()
	n := 0
	accepted.Range(func(any, any) bool { n++; return true })
	require.LessOrEqual(t, n*per, quota)
	require.GreaterOrEqual(t, n*per, quota-2*(block+per),
		"an instance holds at most about one block unspent, so the other is refused only that early")

	stored := 0
	for {
		r := a.do(t, h, k, "GET", "/api/v1/pop/queue/blocks?batch=1000", nil)
		if r.status == http.StatusNoContent {
			break
		}
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var popped struct {
			Messages []json.RawMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(r.body, &popped))
		stored += len(popped.Messages)
	}
	for _, px := range []*testBundle{a, b} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		require.NoError(t, px.srv.Shutdown(ctx))
		cancel()
	}
	cid, err := a.store.ClusterIDByName(t.Context(), "acme")
	require.NoError(t, err)
	used, err := a.store.MonthlyMessages(t.Context(), cid, proxystore.Month(a.clock.Now()))
	require.NoError(t, err)
	require.Equal(t, int64(n*per), used, "the unspent blocks were given back")
	c, err := a.store.ClusterByHost(t.Context(), h)
	require.NoError(t, err)
	require.Positive(t, c.StorageBytesUsed, "the accepted bytes were written")

	require.Equal(t, n*per, stored, "the broker stored exactly what was admitted")
}

// TestClientClosedIsNotBadGateway: a consumer that gives up its long-poll is not a broker failure:
// it is counted as client_closed, never as bad_gateway.
func TestClientClosedIsNotBadGateway(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{})
	b.plan(t, "basic", nil)
	h, k, _ := b.cluster(t, "acme", "basic", broker.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", b.url+"/api/v1/pop/queue/idle?wait=true&timeout=10000", nil)
	require.NoError(t, err)
	req.Host = h
	req.Header.Set("Authorization", "Bearer "+k)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	labels := func(code string) map[string]string { return map[string]string{"cluster": "acme", "code": code} }
	require.Eventually(t, func() bool { return b.metric(t, "queen_proxy_decisions_total", labels("client_closed")) == 1 },
		5*time.Second, 20*time.Millisecond)
	require.Zero(t, b.metric(t, "queen_proxy_decisions_total", labels("bad_gateway")))
}

// TestHealth: the load balancer's check needs no credential and fails when the proxy's database does.
func TestHealth(t *testing.T) {
	t.Parallel()
	b := newBundle(t, bundleOpts{})
	r := b.do(t, "", "", "GET", "/_proxy/health", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.JSONEq(t, `{"status":"ok"}`, string(r.body))
	b.store.Close()
	r = b.do(t, "", "", "GET", "/_proxy/health", nil)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	require.JSONEq(t, `{"status":"unavailable","database":"unreachable"}`, string(r.body))
}

// TestKnownPartitions: under a plan with ceilings, a push to partitions this instance has seen recorded
// passes from memory for the cache's TTL (a forget made elsewhere, here straight in the database, is
// seen only after it), and a queue deleted through the proxy stops counting against max_queues at once.
func TestKnownPartitions(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{cacheTTL: 2 * time.Second})
	b.plan(t, "ceilings", func(p *proxystore.Plan) { p.MaxQueues, p.MaxPartitionsPerQueue = 1, 1 })
	h, k, _ := b.cluster(t, "acme", "ceilings", broker.URL, "admin")
	id, err := b.store.ClusterIDByName(t.Context(), "acme")
	require.NoError(t, err)
	recorded := func(queue string) int {
		_, known, err := b.store.PartitionUsage(t.Context(), id, []string{queue})
		require.NoError(t, err)
		return len(known)
	}

	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("a", 1, 10)).status)
	require.Equal(t, 1, recorded("a"))
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("b", 1, 10)), 403, "quota_exceeded")

	require.NoError(t, b.store.ForgetQueue(t.Context(), id, "a"))
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("a", 1, 10)).status)
	require.Zero(t, recorded("a"), "within the TTL the remembered partition is neither read nor recorded")
	b.clock.Advance(2 * time.Second)
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("a", 1, 10)).status)
	require.Equal(t, 1, recorded("a"), "after the TTL the push reads the ceilings and records again")

	require.Equal(t, http.StatusOK, b.do(t, h, k, "DELETE", "/api/v1/resources/queues/a", nil).status)
	require.Zero(t, recorded("a"))
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("b", 1, 10)).status)
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("a", 1, 10)), 403, "quota_exceeded")
}
