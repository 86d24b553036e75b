package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"QUEEN_MAX_BODY_BYTES": "1024"})
	const want = `{"error":"request body exceeds QUEEN_MAX_BODY_BYTES (1024)"}`

	bigPush := func(size int) []byte {
		pad := strings.Repeat("x", size)
		raw := []byte(`{"items":[{"queue":"big","payload":"` + pad + `"}]}`)
		return raw[:size]
	}
	require413 := func(t *testing.T, r reply) {
		t.Helper()
		requireError(t, r, http.StatusRequestEntityTooLarge)
		require.JSONEq(t, want, string(r.body))
	}

	t.Run("declared length over the cap", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/api/v1/push", "/api/v1/configure", "/api/v1/ack", "/api/v1/ack/batch"} {
			require413(t, b.call(t, t.Context(), "POST", path, bigPush(4096)))
		}
		// Just over and just under the cap.
		require413(t, b.call(t, t.Context(), "POST", "/api/v1/push", bigPush(1025)))
		q := uniqueName("small")
		small := []byte(`{"items":[{"queue":"` + q + `","payload":"`)
		small = append(small, bytes.Repeat([]byte("y"), 1024-len(small)-len(`"}]}`))...)
		small = append(small, `"}]}`...)
		require.Len(t, small, 1024)
		requireJSON(t, b.call(t, t.Context(), "POST", "/api/v1/push", small), http.StatusCreated, nil)
	})

	t.Run("chunked body over the cap", func(t *testing.T) {
		t.Parallel()
		// A reader without a length is sent chunked.
		req, err := http.NewRequestWithContext(t.Context(), "POST", b.rb.URL+"/api/v1/push", io.MultiReader(bytes.NewReader(bigPush(4096))))
		require.NoError(t, err)
		req.ContentLength = -1
		require413(t, b.send(t, req))
	})

	t.Run("chunked body over the cap is answered before the stream ends", func(t *testing.T) {
		t.Parallel()
		// The cap must be answered without reading the whole body: a client still streaming gets its
		// 413 while it streams.
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // hang guard only
		defer cancel()
		// The transport waits for the body writer before it gives up on a request: end the stream
		// when the guard fires.
		stop := context.AfterFunc(ctx, func() { _ = pw.CloseWithError(ctx.Err()) })
		defer stop()
		req, err := http.NewRequestWithContext(ctx, "POST", b.rb.URL+"/api/v1/push", pr)
		require.NoError(t, err)
		req.ContentLength = -1
		go func() {
			// Over the cap, then the stream stays open until the test ends.
			_, _ = pw.Write(bigPush(2048))
		}()
		require413(t, b.send(t, req))
	})

	t.Run("declared 10 MB, a few bytes sent: 413 at once", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", b.addr())
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST /api/v1/push HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			b.addr(), 10<<20, `{"items":[`)
		require.NoError(t, err)
		// The deadline is a hang guard: the answer must come without the rest of the body.
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(hangGuard)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require413(t, reply{status: resp.StatusCode, header: resp.Header, contentLength: resp.ContentLength, body: raw})
	})

	t.Run("GETs are unaffected", func(t *testing.T) {
		t.Parallel()
		requireJSON(t, b.call(t, t.Context(), "GET", "/health", nil), http.StatusOK, nil)
	})
}
