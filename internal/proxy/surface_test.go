package proxy_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// brokerEnv turns the broker's JWT verification on with the proxy's secret, so the broker enforces the
// role sets the proxy's tokens carry.
func brokerEnv() map[string]string {
	return map[string]string{"JWT_ENABLED": "true", "JWT_ALGORITHM": "HS256", "JWT_SECRET": testSecret}
}

// TestErrorSurface produces every status/code pair of the proxy table against a real broker.
func TestErrorSurface(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	// The upstream timeout is short enough for the 504 and long-poll cases below to be quick, and long
	// enough that no forwarded request of the other cases meets it on a loaded host: at 500 ms, the
	// first pop of "forwarded" met it once in CI while other packages' tests took both cores.
	b := newBundle(t, bundleOpts{upstreamTimeout: 2 * time.Second})

	b.plan(t, "basic", func(p *proxystore.Plan) {
		p.MaxPayloadBytes = 1024
		p.MaxBatchItems = 10
	})
	host, key, _ := b.cluster(t, "acme", "basic", broker.URL)

	t.Run("forwarded", func(t *testing.T) {
		r := b.do(t, host, key, "POST", "/api/v1/push", items("q-ok", 3, 100))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		r = b.do(t, host, key, "GET", "/api/v1/pop/queue/q-ok?batch=10", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, float64(2), b.metric(t, "queen_proxy_decisions_total", map[string]string{"cluster": "acme", "code": "forwarded"}))
	})

	t.Run("421 cluster_unknown", func(t *testing.T) {
		requireCode(t, b.do(t, "nobody.queen.test", key, "GET", "/api/v1/pop/queue/x", nil), 421, "cluster_unknown")
	})

	t.Run("401 unauthorized", func(t *testing.T) {
		requireCode(t, b.do(t, host, "", "GET", "/api/v1/pop/queue/x", nil), 401, "unauthorized")
		requireCode(t, b.do(t, host, "qk_0000", "GET", "/api/v1/pop/queue/x", nil), 401, "unauthorized")
		requireCode(t, b.do(t, host, "not-a-key", "GET", "/api/v1/pop/queue/x", nil), 401, "unauthorized")
		// A key of another cluster does not open this one.
		b.plan(t, "other", nil)
		_, otherKey, _ := b.cluster(t, "other", "other", broker.URL)
		requireCode(t, b.do(t, host, otherKey, "GET", "/api/v1/pop/queue/x", nil), 401, "unauthorized")
	})

	t.Run("401 revoked key at once", func(t *testing.T) {
		_, k2, id2 := b.cluster(t, "revoke", "basic", broker.URL)
		h2 := "revoke.queen.test"
		require.Equal(t, http.StatusCreated, b.do(t, h2, k2, "POST", "/api/v1/push", items("q-rev", 1, 10)).status)
		require.Equal(t, http.StatusOK, b.admin(t, "DELETE", "/_proxy/admin/keys/"+id2, nil).status)
		requireCode(t, b.do(t, h2, k2, "POST", "/api/v1/push", items("q-rev", 1, 10)), 401, "unauthorized")
	})

	t.Run("401 invalidated session", func(t *testing.T) {
		r := b.admin(t, "POST", "/_proxy/admin/clusters/acme/sessions", map[string]any{"subject": "alice", "roles": []string{"read-only"}})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var s struct{ ID, Token string }
		require.NoError(t, jsonUnmarshal(r.body, &s))
		require.Equal(t, http.StatusOK, b.do(t, host, s.Token, "GET", "/health", nil).status)
		// The dashboard sends the session as a cookie.
		req, err := http.NewRequestWithContext(t.Context(), "GET", b.url+"/health", nil)
		require.NoError(t, err)
		req.Host = host
		req.AddCookie(&http.Cookie{Name: "queen_session", Value: s.Token})
		res, err := httpClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, http.StatusOK, b.admin(t, "DELETE", "/_proxy/admin/sessions/"+s.ID, nil).status)
		requireCode(t, b.do(t, host, s.Token, "GET", "/health", nil), 401, "unauthorized")
	})

	t.Run("403 cluster_suspended", func(t *testing.T) {
		_, k, _ := b.cluster(t, "sleepy", "basic", broker.URL)
		for _, state := range []string{"suspended", "deleting"} {
			require.Equal(t, http.StatusOK, b.admin(t, "PATCH", "/_proxy/admin/clusters/sleepy", map[string]any{"state": state}).status)
			requireCode(t, b.do(t, "sleepy.queen.test", k, "GET", "/health", nil), 403, "cluster_suspended")
		}
	})

	t.Run("404 route_blocked", func(t *testing.T) {
		for _, p := range []string{"/internal/api/notify", "/internal/api/shared-state/stats",
			"/api/v1/migration/status", "/api/v1/migration/start", "/api/v1/system/shared-state",
			"/api/v1/system/maintenance", "/api/v1/system/maintenance/pop", "/api/v1/stats/refresh",
			"/api/v1/../../internal/api/notify"} {
			method := "GET"
			if strings.Contains(p, "start") || strings.Contains(p, "refresh") || strings.Contains(p, "notify") {
				method = "POST"
			}
			requireCode(t, b.do(t, host, key, method, p, map[string]any{}), 404, "route_blocked")
		}
	})

	t.Run("403 feature_gated", func(t *testing.T) {
		for _, p := range []string{"/streams/v1/queries", "/streams/v1/cycle", "/api/v1/traces", "/api/v1/traces/names"} {
			method := "POST"
			if strings.HasSuffix(p, "names") {
				method = "GET"
			}
			requireCode(t, b.do(t, host, key, method, p, map[string]any{}), 403, "feature_gated")
		}
		// With the features on, the same routes reach the broker: its answers carry no proxy code.
		b.plan(t, "featured", func(p *proxystore.Plan) { p.FeatureStreams, p.FeatureTraces, p.FeatureOperator = true, true, true })
		fh, fk, _ := b.cluster(t, "featured", "featured", broker.URL)
		r := b.do(t, fh, fk, "GET", "/api/v1/traces/names", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Empty(t, codeOf(r), "%s", r.body)
		r = b.do(t, fh, fk, "GET", "/api/v1/system/maintenance", nil) // the broker wants admin: its 403
		require.Contains(t, string(r.body), "Insufficient permissions")
		require.Empty(t, codeOf(r), "%s", r.body)
	})

	t.Run("413 payload_too_large", func(t *testing.T) {
		big := items("q-big", 5, 100)
		big["items"].([]map[string]any)[3]["payload"] = strings.Repeat("y", 2046) // 2048 bytes with quotes
		msg := requireCode(t, b.do(t, host, key, "POST", "/api/v1/push", big), 413, "payload_too_large")
		require.Equal(t, "item 3: payload 2048 bytes exceeds max_payload_bytes (1024)", msg)

		msg = requireCode(t, b.do(t, host, key, "POST", "/api/v1/push", items("q-big", 11, 10)), 413, "payload_too_large")
		require.Equal(t, "batch of 11 items exceeds max_batch_items (10)", msg)

		// Ten items of 1000 bytes pass: the per-item cap is per item, not per batch.
		require.Equal(t, http.StatusCreated, b.do(t, host, key, "POST", "/api/v1/push", items("q-big", 10, 1000)).status)
	})

	t.Run("413 body cap", func(t *testing.T) {
		small := newBundle(t, bundleOpts{maxBody: 4096})
		small.plan(t, "p", nil)
		sh, sk, _ := small.cluster(t, "acme", "p", broker.URL)
		msg := requireCode(t, small.do(t, sh, sk, "POST", "/api/v1/push", items("q", 1, 5000)), 413, "payload_too_large")
		require.Equal(t, "request body exceeds cap", msg)
		// A chunked body without Content-Length is cut off at the cap too.
		req, err := http.NewRequestWithContext(t.Context(), "POST", small.url+"/api/v1/push", strings.NewReader(strings.Repeat(" ", 5000)))
		require.NoError(t, err)
		req.Host, req.ContentLength = sh, -1
		req.Header.Set("Authorization", "Bearer "+sk)
		res, err := httpClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 413, res.StatusCode)
	})

	t.Run("403 storage_quota_exceeded", func(t *testing.T) {
		b.plan(t, "storage", func(p *proxystore.Plan) { p.StorageQuotaBytes = 1000 })
		h, k, _ := b.cluster(t, "full", "storage", broker.URL)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q-s", 2, 500)).status)
		// The accepted push's 1000 payload bytes reached the quota.
		requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q-s", 1, 10)), 403, "storage_quota_exceeded")
		// Reads still work.
		require.Equal(t, http.StatusOK, b.do(t, h, k, "GET", "/api/v1/pop/queue/q-s", nil).status)
	})

	t.Run("403 quota_exceeded", func(t *testing.T) {
		b.plan(t, "monthly", func(p *proxystore.Plan) {
			p.MonthlyMessageQuota = 5
			p.MaxQueues = 2
			p.MaxPartitionsPerQueue = 2
			p.MaxRetentionSeconds = 3600
		})
		h, k, _ := b.cluster(t, "counted", "monthly", broker.URL)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q-m", 3, 10)).status)
		msg := requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q-m", 3, 10)), 403, "quota_exceeded")
		require.Contains(t, msg, "monthly message quota")
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q-m", 2, 10)).status)
		requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q-m", 1, 10)), 403, "quota_exceeded")
		// A new month starts from zero.
		b.clock.Advance(31 * 24 * time.Hour)
		require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("q-m2", 1, 10)).status)

		// Queue ceiling (q-m and q-m2 exist), partition ceiling, retention ceiling.
		msg = requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q-m3", 1, 10)), 403, "quota_exceeded")
		require.Contains(t, msg, "max_queues")
		parts := map[string]any{"items": []map[string]any{
			{"queue": "q-m", "partition": "a", "payload": 1}, {"queue": "q-m", "partition": "b", "payload": 2}}}
		msg = requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", parts), 403, "quota_exceeded")
		require.Contains(t, msg, "max_partitions_per_queue")
		msg = requireCode(t, b.do(t, h, k, "POST", "/api/v1/configure",
			map[string]any{"queue": "q-m", "options": map[string]any{"retentionSeconds": 7200}}), 403, "quota_exceeded")
		require.Contains(t, msg, "retention")
	})

	t.Run("403 push_blocked", func(t *testing.T) {
		h, k, _ := b.cluster(t, "unpaid", "basic", broker.URL)
		require.Equal(t, http.StatusOK, b.admin(t, "PATCH", "/_proxy/admin/clusters/unpaid", map[string]any{"billingHold": true}).status)
		requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("q", 1, 10)), 403, "push_blocked")
		require.Equal(t, http.StatusNoContent, b.do(t, h, k, "GET", "/api/v1/pop/queue/q", nil).status)
	})

	t.Run("502 bad_gateway", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		dead := "http://" + ln.Addr().String()
		require.NoError(t, ln.Close())
		h, k, _ := b.cluster(t, "dead", "basic", dead)
		requireCode(t, b.do(t, h, k, "GET", "/health", nil), 502, "bad_gateway")
		bad := "ftp://broker.invalid"
		require.NoError(t, b.store.UpdateCluster(t.Context(), proxystore.UpdateClusterParams{Name: "dead", UpstreamURL: &bad}))
		msg := requireCode(t, b.do(t, h, k, "GET", "/health", nil), 502, "bad_gateway")
		require.Equal(t, "bad upstream URI", msg)
	})

	t.Run("504 upstream_timeout", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(slow.Close)
		t.Cleanup(func() { close(release) })
		h, k, _ := b.cluster(t, "slow", "basic", slow.URL)
		requireCode(t, b.do(t, h, k, "GET", "/health", nil), 504, "upstream_timeout")

		// A long-poll's own timeout extends the deadline: an empty 3 s poll against the real broker
		// gets its 204 although the proxy timeout is 2 s.
		r := b.do(t, host, key, "GET", "/api/v1/pop/queue/q-empty?wait=true&timeout=3000", nil)
		require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	})

	t.Run("every denial is logged and counted", func(t *testing.T) {
		logs := b.logs.String()
		for _, code := range []string{"cluster_unknown", "unauthorized", "cluster_suspended", "route_blocked",
			"feature_gated", "payload_too_large", "storage_quota_exceeded", "quota_exceeded", "push_blocked",
			"bad_gateway", "upstream_timeout"} {
			require.Contains(t, logs, "code="+code)
		}
		require.Contains(t, logs, "cluster=acme")
		require.Equal(t, float64(1), b.metric(t, "queen_proxy_decisions_total", map[string]string{"cluster": "unknown", "code": "cluster_unknown"}))
		require.Equal(t, float64(1), b.metric(t, "queen_proxy_decisions_total", map[string]string{"cluster": "unpaid", "code": "push_blocked"}))
	})
}

// TestForwardedToken checks the JWT the broker receives: HS256, sub = key id, roles = the key's roles,
// exp about 60 s ahead, and the tenant's own credential stripped.
func TestForwardedToken(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Clone(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(up.Close)
	b := newBundle(t, bundleOpts{})
	b.plan(t, "p", nil)
	h, k, id := b.cluster(t, "acme", "p", up.URL+"/base", "write-only", "read-only")
	r := b.do(t, h, k, "GET", "/api/v1/pop/queue/q?wait=false", nil)
	require.Equal(t, http.StatusNoContent, r.status)
	in := <-got
	require.Equal(t, "/base/api/v1/pop/queue/q", in.URL.Path)
	require.Equal(t, "wait=false", in.URL.RawQuery)
	tok, ok := strings.CutPrefix(in.Header.Get("Authorization"), "Bearer ")
	require.True(t, ok)
	require.NotContains(t, tok, k)
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte(testSecret), nil },
		jwt.WithValidMethods([]string{"HS256"}))
	require.NoError(t, err)
	require.True(t, parsed.Valid)
	require.Equal(t, id, claims["sub"])
	require.Equal(t, []any{"write-only", "read-only"}, claims["roles"])
	exp, err := claims.GetExpirationTime()
	require.NoError(t, err)
	require.InDelta(t, 60, time.Until(exp.Time).Seconds(), 5)
}

func codeOf(r resp) string {
	var e struct {
		Code string `json:"code"`
	}
	_ = jsonUnmarshal(r.body, &e)
	return e.Code
}
