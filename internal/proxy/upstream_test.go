package proxy

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingServer is a broker stand-in that counts the connections it accepted and closed.
type countingServer struct {
	*httptest.Server
	opened, closed atomic.Int64
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.opened.Add(1)
		case http.StateClosed:
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Auth", r.Header.Get("Authorization"))
	_, _ = w.Write(append([]byte(r.Method+" "+r.URL.RequestURI()+" "), b...))
}

func roundTrip(t *testing.T, tr http.RoundTripper, ctx context.Context, method, url, body string) (*http.Response, string, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	out, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, string(out), err
}

// TestUpstreamReusesOneConnection: sequential requests, with and without bodies, go over one
// connection, headers and bodies intact.
func TestUpstreamReusesOneConnection(t *testing.T) {
	t.Parallel()
	srv := newCountingServer(t, echo)
	tr := newUpstreamTransport(http.DefaultTransport, 4, time.Minute)
	defer tr.CloseIdleConnections()
	for i := range 20 {
		method, body := http.MethodGet, ""
		if i%2 == 1 {
			method, body = http.MethodPost, strings.Repeat("p", 100*i)
		}
		resp, got, err := roundTrip(t, tr, t.Context(), method, srv.URL+"/api/v1/x?q=1", body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, method+" /api/v1/x?q=1 "+body, got)
		require.Equal(t, "Bearer x", resp.Header.Get("X-Auth"))
	}
	require.EqualValues(t, 1, srv.opened.Load())
}

// TestUpstreamSkipsConnectionsTheBrokerClosed: a connection the broker closed while it sat idle is
// not sent on; the POST that follows goes out on a new one and succeeds.
func TestUpstreamSkipsConnectionsTheBrokerClosed(t *testing.T) {
	t.Parallel()
	srv := newCountingServer(t, echo)
	tr := newUpstreamTransport(http.DefaultTransport, 4, time.Minute)
	defer tr.CloseIdleConnections()
	_, _, err := roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	tr.mu.Lock()
	var idle *upConn
	for _, list := range tr.idle {
		idle = list[0]
	}
	tr.mu.Unlock()
	srv.CloseClientConnections()
	// Until the broker's FIN reaches this side the connection looks open, and sending on it is the
	// race no transport can win; the peek must see it once it has.
	require.Eventually(t, func() bool { return !open(idle.Conn) }, 5*time.Second, time.Millisecond)
	_, got, err := roundTrip(t, tr, t.Context(), http.MethodPost, srv.URL+"/b", "push")
	require.NoError(t, err)
	require.Equal(t, "POST /b push", got)
	require.EqualValues(t, 2, srv.opened.Load())
}

// TestUpstreamRequestEndAbortsAndDiscards: a request whose context ends while the broker has not
// answered fails without waiting for the answer, and its connection is closed, not used again; nor is one whose answer was not read
// to its end.
func TestUpstreamRequestEndAbortsAndDiscards(t *testing.T) {
	t.Parallel()
	release, arrived, dropped := make(chan struct{}), make(chan struct{}, 1), make(chan struct{}, 1)
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done(): // the proxy's side closed the connection
				dropped <- struct{}{}
			}
		case "/big":
			_, _ = w.Write(bytes.Repeat([]byte("x"), 1<<20))
		default:
			echo(w, r)
		}
	})
	defer close(release)
	tr := newUpstreamTransport(http.DefaultTransport, 4, time.Minute)
	defer tr.CloseIdleConnections()

	_, _, err := roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	// The request ends (client gone) while the broker holds it: the blocked read fails, and the
	// connection is closed under the broker's handler.
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-arrived; cancel() }()
	_, _, err = roundTrip(t, tr, ctx, http.MethodGet, srv.URL+"/slow", "")
	require.ErrorIs(t, ctx.Err(), context.Canceled)
	require.Error(t, err)
	<-dropped
	_, _, err = roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	require.EqualValues(t, 2, srv.opened.Load(), "the aborted connection was not reused")

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/big", nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_, err = resp.Body.Read(make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	_, _, err = roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	require.EqualValues(t, 3, srv.opened.Load(), "a connection with an unread answer on it was not reused")
}

// TestUpstreamClosesIdleConnections: connections idle past the idle timeout are closed by the sweep,
// and CloseIdleConnections closes the rest and keeps none after.
func TestUpstreamClosesIdleConnections(t *testing.T) {
	t.Parallel()
	srv := newCountingServer(t, echo)
	tr := newUpstreamTransport(http.DefaultTransport, 4, 50*time.Millisecond)
	_, _, err := roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return srv.closed.Load() == 1 }, 5*time.Second, 5*time.Millisecond)

	tr = newUpstreamTransport(http.DefaultTransport, 4, time.Minute)
	_, _, err = roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	tr.CloseIdleConnections()
	require.Eventually(t, func() bool { return srv.closed.Load() == 2 }, 5*time.Second, 5*time.Millisecond)
	_, _, err = roundTrip(t, tr, t.Context(), http.MethodGet, srv.URL+"/a", "")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return srv.closed.Load() == 3 }, 5*time.Second, 5*time.Millisecond)
}
