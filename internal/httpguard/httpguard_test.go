package httpguard

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScannerVerdicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []Verdict
		lost     bool
	}{
		{"no body", "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\n\r\n", []Verdict{OK, OK}, false},
		{"length", "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nGET /GET / HTTP/1.1\r\n\r\n", []Verdict{OK, OK}, false},
		{"chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n", []Verdict{OK, OK}, false},
		{"both", "POST / HTTP/1.1\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n", []Verdict{Conflict, OK}, false},
		{"both, other order and case", "POST / HTTP/1.1\r\ntransfer-encoding: Chunked\r\ncontent-length: 0\r\n\r\n0\r\n\r\n", []Verdict{Conflict}, false},
		{"folded", "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", []Verdict{Conflict}, false},
		{"HTTP/1.0 with TE", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nabGET / HTTP/1.0\r\n\r\n", []Verdict{Conflict, OK}, false},
		{"bare LF", "GET / HTTP/1.1\nHost: x\n\nGET / HTTP/1.1\n\n", []Verdict{OK, OK}, false},
		{"gzip TE", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", nil, true},
		{"two Content-Lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", nil, true},
		{"bare LF chunk line", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\nA\r\n0\r\n\r\n", []Verdict{OK}, true},
	} {
		var s Scanner
		got := s.Feed([]byte(tc.in), nil)
		require.Equal(t, tc.want, got, tc.name)
		require.Equal(t, tc.lost, s.st == stLost, tc.name)
		// Byte by byte, the same.
		var s1 Scanner
		var got1 []Verdict
		for i := range len(tc.in) {
			got1 = s1.Feed([]byte{tc.in[i]}, got1)
		}
		require.Equal(t, tc.want, got1, tc.name+" (byte by byte)")
	}
}

// serve starts a guarded server counting the requests its handler sees.
func serve(t *testing.T) (addr string, served *atomic.Int64) {
	t.Helper()
	served = &atomic.Int64{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		served.Add(1)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(Install(srv, ln)) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return ln.Addr().String(), served
}

// roundTrip writes raw bytes and reads every answer until the server closes (or a minute passes).
func roundTrip(t *testing.T, addr, raw string) (statuses []int, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, raw)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
	br := bufio.NewReader(c)
	for {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return statuses, !errors.Is(err, net.ErrClosed) && !isTimeout(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		statuses = append(statuses, res.StatusCode)
		if len(statuses) == 2 && !strings.Contains(raw, "smuggled") {
			return statuses, false // both answered: the connection was kept, as it should be
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestSmugglingRefused: the pipelined request behind a Content-Length + Transfer-Encoding request is
// never served; the first is answered 400 and the connection closed.
func TestSmugglingRefused(t *testing.T) {
	t.Parallel()
	addr, served := serve(t)
	statuses, closed := roundTrip(t, addr, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, []int{http.StatusBadRequest}, statuses)
	require.True(t, closed)
	require.Zero(t, served.Load())

	// Two honest pipelined requests are both served on one connection.
	statuses, closed = roundTrip(t, addr, "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, []int{http.StatusOK, http.StatusOK}, statuses)
	require.False(t, closed)
	require.Equal(t, int64(2), served.Load())
}

// FuzzScannerFraming compares the scanner's request boundaries with net/http's own parse of the same
// bytes: wherever net/http serves a request, the scanner (unless it gave up, which closes the
// connection) ends that request at the same byte.
func FuzzScannerFraming(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nabGET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// net/http: where each request it parses and reads completely ends.
		cr := &countingReader{r: bytes.NewReader(in)}
		br := bufio.NewReader(cr)
		var goEnds []int
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				break
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				break
			}
			goEnds = append(goEnds, cr.n-br.Buffered())
		}
		// The scanner, byte by byte: where it is back at a request line.
		var s Scanner
		var ends []int
		lostAt := -1
		for i := range in {
			before := s.st
			s.Feed(in[i:i+1], nil)
			if s.st == stLost {
				lostAt = i
				break
			}
			if s.st == stRequestLine && before != stRequestLine {
				ends = append(ends, i+1)
			}
		}
		for i, end := range goEnds {
			if lostAt >= 0 && lostAt < end {
				return // gave up before net/http finished this request: its connection is closed after it
			}
			if i >= len(ends) || ends[i] != end {
				t.Fatalf("request %d: net/http ends it at byte %d, the scanner at %v (all: %v)", i, end, ends, goEnds)
			}
		}
	})
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
