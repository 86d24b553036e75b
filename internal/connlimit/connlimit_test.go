package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCapRefusesAndFrees: past the cap a connection gets the refusal and is closed; closing an admitted
// one (twice) frees exactly one place.
func TestCapRefusesAndFrees(t *testing.T) {
	t.Parallel()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusals := 0
	l := New(raw, 2, func() { refusals++ })
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", raw.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	dial()
	dial()
	first, second := <-accepted, <-accepted
	require.EqualValues(t, 2, l.Open())

	refused := dial()
	require.NoError(t, refused.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(refused), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body) // to EOF: the listener closed it
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.JSONEq(t, `{"error":"too many open connections","code":"connection_limit"}`, string(body))
	require.True(t, resp.Close)
	require.EqualValues(t, 1, l.Refused())
	require.EqualValues(t, 2, l.Open())

	require.NoError(t, first.Close())
	_ = first.Close()
	require.EqualValues(t, 1, l.Open())
	dial()
	third := <-accepted
	require.EqualValues(t, 2, l.Open())
	require.NoError(t, second.Close())
	require.NoError(t, third.Close())
	require.EqualValues(t, 0, l.Open())
	require.Equal(t, 1, refusals)
}
