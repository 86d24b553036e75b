package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

const (
	testSecret     = "proxy-test-secret-0123456789abcdef"
	testAdminToken = "admin-token"
)

// fakeClock is the injected clock of the limiters.
type fakeClock struct {
	mu sync.Mutex // protects t
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type testBundle struct {
	dbURL string // the proxy's database
	store *proxystore.Store
	srv   *proxy.Server
	url   string
	addr  string // host:port of the listener
	clock *fakeClock
	reg   *prometheus.Registry
	logs  *testenv.SyncBuffer
}

type bundleOpts struct {
	shadow          bool
	realClock       bool
	upstreamTimeout time.Duration
	maxBody         int64
	storeURL        string // share a proxy database with another bundle
	// connection limits (zero: the defaults)
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout time.Duration
	maxConns, maxConnsPerCluster                              int
	// the request path's batching (zero: off, every request reads and writes the database)
	cacheTTL, usageFlush time.Duration
	quotaBlock           int64
}

// newBundle starts a proxy server (real listener) on a fresh database of its own.
func newBundle(t testing.TB, o bundleOpts) *testBundle {
	t.Helper()
	dbURL := o.storeURL
	if dbURL == "" {
		dbURL = testenv.NewDatabase(t)
	}
	st, err := proxystore.Open(t.Context(), dbURL, "")
	require.NoError(t, err)
	t.Cleanup(st.Close)
	b := &testBundle{dbURL: dbURL, store: st, clock: &fakeClock{t: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)},
		reg: prometheus.NewRegistry(), logs: &testenv.SyncBuffer{}}
	now := b.clock.Now
	if o.realClock {
		now = time.Now
	}
	b.srv, err = proxy.NewServer(proxy.Options{
		Store: st, Logger: slog.New(slog.NewTextHandler(b.logs, nil)), Registry: b.reg,
		JWTSecret: []byte(testSecret), Shadow: o.shadow, MaxBodyBytes: o.maxBody,
		UpstreamTimeout: o.upstreamTimeout, AdminToken: testAdminToken, NowFunc: now,
		ReadHeaderTimeout: o.readHeaderTimeout, ReadTimeout: o.readTimeout, WriteTimeout: o.writeTimeout,
		IdleTimeout: o.idleTimeout, MaxConns: o.maxConns, MaxConnsPerCluster: o.maxConnsPerCluster,
		CacheTTL: o.cacheTTL, UsageFlush: o.usageFlush, QuotaBlock: o.quotaBlock,
	})
	require.NoError(t, err)
	// Served as queen-proxy serves: its timeouts, caps and framing guard on a real listener.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- b.srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.srv.Shutdown(ctx)
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	})
	b.addr = ln.Addr().String()
	b.url = "http://" + b.addr
	return b
}

// plan creates a plan with generous defaults changed by mod.
func (b *testBundle) plan(t testing.TB, name string, mod func(*proxystore.Plan)) {
	t.Helper()
	p := proxystore.Plan{Name: name, MaxPayloadBytes: 1 << 20, MaxBatchItems: 10000}
	if mod != nil {
		mod(&p)
	}
	_, err := proxy.CreatePlan(t.Context(), b.store, p)
	require.NoError(t, err)
}

// cluster creates a cluster <name>.queen.test on plan, forwarding to upstream, with a key of roles.
func (b *testBundle) cluster(t testing.TB, name, plan, upstream string, roles ...string) (host, key, keyID string) {
	t.Helper()
	host = name + ".queen.test"
	_, err := proxy.CreateCluster(t.Context(), b.store, proxystore.CreateClusterParams{
		Name: name, Hosts: []string{host}, UpstreamURL: upstream, Plan: plan})
	require.NoError(t, err)
	if len(roles) == 0 {
		roles = []string{"read-write"}
	}
	keyID, key, err = proxy.CreateKey(t.Context(), b.store, name, "test", roles)
	require.NoError(t, err)
	return host, key, keyID
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) errBody(t *testing.T) (msg, code string) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e), "body %q", r.body)
	return e.Error, e.Code
}

func (r resp) retryAfter(t *testing.T) int {
	t.Helper()
	v, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", r.header.Get("Retry-After"))
	return v
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// do sends one request to the proxy with the given Host and bearer token.
func (b *testBundle) do(t *testing.T, host, token, method, path string, body any) resp {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.url+path, rd)
	require.NoError(t, err)
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := httpClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return resp{status: res.StatusCode, header: res.Header, body: out}
}

// requireRetry checks a 429 rate_limited and returns its Retry-After.
func requireRetry(t *testing.T, r resp) int {
	t.Helper()
	requireCode(t, r, http.StatusTooManyRequests, "rate_limited")
	return r.retryAfter(t)
}

// requireCode checks a proxy error response.
func requireCode(t *testing.T, r resp, status int, code string) string {
	t.Helper()
	require.Equal(t, status, r.status, "body %s", r.body)
	msg, got := r.errBody(t)
	require.Equal(t, code, got)
	return msg
}

func (b *testBundle) admin(t *testing.T, method, path string, body any) resp {
	t.Helper()
	return b.do(t, "admin.local", testAdminToken, method, path, body)
}

// items builds a push body of n items into queue with payloads of size bytes (as a JSON string).
func items(queue string, n, size int) map[string]any {
	var its []map[string]any
	payload := strings.Repeat("x", max(0, size-2)) // a JSON string of size bytes including quotes
	for i := range n {
		its = append(its, map[string]any{"queue": queue, "payload": payload,
			"transactionId": fmt.Sprintf("tx-%d-%d", time.Now().UnixNano(), i)})
	}
	return map[string]any{"items": its}
}

// metric reads one counter from the bundle's registry; 0 when absent.
func (b *testBundle) metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	if m := b.series(t, name, labels); m != nil {
		return m.GetCounter().GetValue()
	}
	return 0
}

// gauge reads one gauge from the bundle's registry; 0 when absent.
func (b *testBundle) gauge(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	if m := b.series(t, name, labels); m != nil {
		return m.GetGauge().GetValue()
	}
	return 0
}

// series is the first series of name whose labels include labels, or nil.
func (b *testBundle) series(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := b.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func proxyCreateKey(t *testing.T, b *testBundle, cluster string, roles ...string) (string, string, error) {
	t.Helper()
	return proxy.CreateKey(t.Context(), b.store, cluster, "extra", roles)
}
