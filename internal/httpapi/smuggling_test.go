package httpapi_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pipeline writes raw requests on one connection and reads every answer until the broker closes it:
// the statuses, and whether it closed (rather than waiting for more).
func pipeline(t *testing.T, addr, raw string) (statuses []int, bodies []string, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte(raw))
	require.NoError(t, err)
	// A hang guard only: an open connection with nothing more to answer ends the read here.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	br := bufio.NewReader(conn)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return statuses, bodies, false
			}
			return statuses, bodies, true
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses, bodies = append(statuses, resp.StatusCode), append(bodies, string(b))
	}
}

// TestConflictingFramingRefused: a request with both Content-Length and Transfer-Encoding is answered
// 400 and its connection closed, so the request pipelined behind it is never served (RFC 9112 §6.1,
// §6.3); two honest pipelined requests are both answered on one connection.
func TestConflictingFramingRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	smuggled := `{"items":[{"queue":"smuggled","payload":1}]}`
	statuses, bodies, closed := pipeline(t, b.addr(),
		"POST /api/v1/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+
			"POST /api/v1/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(smuggled))+"\r\n\r\n"+smuggled)
	require.Equal(t, []int{http.StatusBadRequest}, statuses, "%v", bodies)
	require.JSONEq(t, `{"error":"conflicting Content-Length and Transfer-Encoding"}`, bodies[0])
	require.True(t, closed, "the connection must be closed after the refusal")
	require.Equal(t, http.StatusNoContent, b.call(t, t.Context(), http.MethodGet, "/api/v1/pop/queue/smuggled", nil).status,
		"the smuggled push was applied")

	statuses, _, closed = pipeline(t, b.addr(),
		"POST /api/v1/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(smuggled))+"\r\n\r\n"+smuggled+
			"GET /api/v1/pop/queue/smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, []int{http.StatusCreated, http.StatusOK}, statuses)
	require.False(t, closed)
}
