package broker_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

// TestConnectionCap: with MAX_CONNECTIONS open, a new connection is answered 503 connection_limit and
// closed without being read; once one closes a new one is served, and the refusal is counted.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	b := testenv.StartBroker(t, map[string]string{"MAX_CONNECTIONS": "2"})
	addr := strings.TrimPrefix(b.URL, "http://")
	livez := func(c net.Conn) *http.Response {
		_, err := io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: q\r\n\r\n")
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp
	}
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		require.Equal(t, http.StatusOK, livez(c).StatusCode)
		held = append(held, c)
	}

	over, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer over.Close()
	require.NoError(t, over.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.JSONEq(t, `{"error":"too many open connections","code":"connection_limit"}`, string(body))
	require.True(t, resp.Close)

	require.NoError(t, held[0].Close())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var metrics string
	require.Eventually(t, func() bool {
		r, err := client.Get(b.URL + "/metrics/prometheus")
		if err != nil {
			return false
		}
		defer r.Body.Close()
		out, _ := io.ReadAll(r.Body)
		metrics = string(out)
		return r.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond)
	require.Contains(t, metrics, "queen_http_connections_limit 2\n")
	require.Contains(t, metrics, "queen_http_connections_refused_total ")
	require.NotContains(t, metrics, "queen_http_connections_refused_total 0\n")
	require.Equal(t, http.StatusOK, livez(held[1]).StatusCode, "an admitted connection is still served")
}
