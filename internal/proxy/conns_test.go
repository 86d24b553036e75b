package proxy_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

// rawConn is a client connection the test drives byte by byte.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{Conn: c, br: bufio.NewReader(c)}
}

// get sends one GET on the connection and reads its answer.
func (c *rawConn) get(t *testing.T, host, token, path string) (*http.Response, string) {
	t.Helper()
	_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, host, token)
	require.NoError(t, err)
	return c.read(t)
}

func (c *rawConn) read(t *testing.T) (*http.Response, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	res, err := http.ReadResponse(c.br, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(body)
}

// closedByServer waits (up to a minute, far beyond any timeout under test) for the server to close the
// connection, and reports whether it did.
func (c *rawConn) closedByServer() bool {
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	_, err := io.Copy(io.Discard, c.br)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

func stubUpstream(t *testing.T) string {
	t.Helper()
	return startStub(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
}

// TestIdleConnectionsClosed holds 200 connections, half idle after an answered request and half that
// never send one, and counts every one closed by the proxy (idle and header timeouts).
func TestIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	b := newBundle(t, bundleOpts{idleTimeout: 300 * time.Millisecond, readHeaderTimeout: 300 * time.Millisecond})
	b.plan(t, "p", nil)
	h, k, _ := b.cluster(t, "acme", "p", stubUpstream(t))

	const n = 200
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dialRaw(t, b.addr)
		if i%2 == 0 {
			res, body := conns[i].get(t, h, k, "/health")
			require.Equal(t, http.StatusOK, res.StatusCode, body)
		}
	}
	var closed atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			if c.closedByServer() {
				closed.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(n), closed.Load(), "connections the proxy left open")
	require.Eventually(t, func() bool {
		return b.gauge(t, "queen_proxy_open_connections", nil) == 0 &&
			b.gauge(t, "queen_proxy_cluster_open_connections", map[string]string{"cluster": "acme"}) == 0
	}, 30*time.Second, 10*time.Millisecond)
}

// TestSlowBodyClosed: an authenticated request whose body trickles in is cut off by the read timeout
// long before the body is complete.
func TestSlowBodyClosed(t *testing.T) {
	t.Parallel()
	b := newBundle(t, bundleOpts{readTimeout: time.Second})
	b.plan(t, "p", nil)
	h, k, _ := b.cluster(t, "acme", "p", stubUpstream(t))

	const size = 1000 // one byte per 20 ms: 20 s to send, against a 1 s read timeout
	c := dialRaw(t, b.addr)
	_, err := fmt.Fprintf(c, "POST /api/v1/push HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", h, k, size)
	require.NoError(t, err)
	answered := make(chan struct{})
	var sent atomic.Int64
	go func() {
		tk := time.NewTicker(20 * time.Millisecond) // the client's pace, not a synchronisation
		defer tk.Stop()
		for range size {
			select {
			case <-answered:
				return
			case <-tk.C:
			}
			if _, err := c.Write([]byte{' '}); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	require.True(t, c.closedByServer(), "the proxy kept a trickling request open")
	close(answered)
	require.Less(t, sent.Load(), int64(size), "the whole body was accepted")
}

// TestLongPollOutlivesTimeouts: a waiting pop is bounded by its own timeout, not by the read and write
// timeouts of ordinary requests.
func TestLongPollOutlivesTimeouts(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{readTimeout: 300 * time.Millisecond, upstreamTimeout: 400 * time.Millisecond,
		writeTimeout: 500 * time.Millisecond})
	b.plan(t, "p", nil)
	h, k, _ := b.cluster(t, "acme", "p", broker.URL)
	c := dialRaw(t, b.addr)
	res, body := c.get(t, h, k, "/api/v1/pop/queue/empty?wait=true&timeout=2000")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
	// The connection is still usable afterwards.
	res, body = c.get(t, h, k, "/api/v1/pop/queue/empty")
	require.Equal(t, http.StatusNoContent, res.StatusCode, body)
}

// TestConnectionCaps: beyond the global cap a connection is answered 503 connection_limit and closed at
// once; beyond the per-cluster cap the cluster's request is, while other clusters still get through.
// Both caps and counts are in the metrics.
func TestConnectionCaps(t *testing.T) {
	t.Parallel()
	b := newBundle(t, bundleOpts{maxConns: 3, maxConnsPerCluster: 2})
	b.plan(t, "p", nil)
	up := stubUpstream(t)
	h, k, _ := b.cluster(t, "acme", "p", up)
	h2, k2, _ := b.cluster(t, "other", "p", up)
	require.Equal(t, float64(3), b.gauge(t, "queen_proxy_connection_limit", map[string]string{"scope": "global"}))
	require.Equal(t, float64(2), b.gauge(t, "queen_proxy_connection_limit", map[string]string{"scope": "cluster"}))

	first, second := dialRaw(t, b.addr), dialRaw(t, b.addr)
	for _, c := range []*rawConn{first, second} {
		res, body := c.get(t, h, k, "/health")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	// A third connection to acme is one too many for the cluster; another cluster is not affected.
	third := dialRaw(t, b.addr)
	res, body := third.get(t, h, k, "/health")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	require.JSONEq(t, `{"error":"too many open connections to cluster acme (max 2 per instance)","code":"connection_limit"}`, body)
	require.True(t, third.closedByServer())
	third = dialRaw(t, b.addr)
	res, body = third.get(t, h2, k2, "/health")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Equal(t, float64(2), b.gauge(t, "queen_proxy_cluster_open_connections", map[string]string{"cluster": "acme"}))
	require.Equal(t, float64(3), b.gauge(t, "queen_proxy_open_connections", nil))

	// A fourth connection is beyond the global cap: answered and closed without a request.
	fourth := dialRaw(t, b.addr)
	res, body = fourth.read(t)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	require.JSONEq(t, `{"error":"too many open connections","code":"connection_limit"}`, body)
	require.True(t, fourth.closedByServer())
	require.Equal(t, float64(1), b.metric(t, "queen_proxy_connections_refused_total", map[string]string{"scope": "global"}))
	require.Equal(t, float64(1), b.metric(t, "queen_proxy_connections_refused_total", map[string]string{"scope": "cluster"}))

	// Closing one gives its places back.
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		return b.gauge(t, "queen_proxy_cluster_open_connections", map[string]string{"cluster": "acme"}) == 1
	}, 30*time.Second, 10*time.Millisecond)
	again := dialRaw(t, b.addr)
	res, body = again.get(t, h, k, "/health")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
}

// TestConflictingFramingRefused: a request with both Content-Length and Transfer-Encoding is answered
// 400 and its connection closed; the request pipelined behind it never reaches the broker.
func TestConflictingFramingRefused(t *testing.T) {
	t.Parallel()
	var forwarded atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(up.Close)
	b := newBundle(t, bundleOpts{})
	b.plan(t, "p", nil)
	h, k, _ := b.cluster(t, "acme", "p", up.URL)

	c := dialRaw(t, b.addr)
	_, err := fmt.Fprintf(c, "POST /api/v1/push HTTP/1.1\r\nHost: %[1]s\r\nAuthorization: Bearer %[2]s\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+
		"GET /api/v1/pop/queue/smuggled HTTP/1.1\r\nHost: %[1]s\r\nAuthorization: Bearer %[2]s\r\n\r\n", h, k)
	require.NoError(t, err)
	res, body := c.read(t)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	require.JSONEq(t, `{"error":"conflicting Content-Length and Transfer-Encoding","code":"bad_request"}`, body)
	require.True(t, c.closedByServer())
	require.Zero(t, forwarded.Load())
}
