// Package connlimit caps the client connections a server holds open. A connection past the cap is
// answered at once with 503 {"error":"too many open connections","code":"connection_limit"} and
// closed, without reading it: a server that runs out of file descriptors instead stops accepting
// altogether (Go's accept loop backs off on EMFILE), and every client then waits rather than being
// told to go elsewhere. The broker and the proxy both use it.
package connlimit

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// Code is the envelope's code of the refusal, the broker's and the proxy's alike.
const Code = "connection_limit"

// refusal is the whole answer to a connection past the cap.
var refusal = fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
	len(refusalBody), refusalBody)

const refusalBody = `{"error":"too many open connections","code":"` + Code + `"}` + "\n"

// Listener admits connections while fewer than its cap are open. Open connections are the ones it
// returned and that have not been closed yet.
type Listener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	refused  atomic.Int64
	onRefuse func()
}

// New wraps ln with a cap of max open connections (max ≥ 1). A connection beyond it is refused and
// closed; onRefuse, when not nil, is called for each.
func New(ln net.Listener, max int, onRefuse func()) *Listener {
	return &Listener{Listener: ln, max: int64(max), onRefuse: onRefuse}
}

// Open is how many admitted connections are still open.
func (l *Listener) Open() int64 { return l.open.Load() }

// Refused is how many connections were turned away since the listener was made.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// Max is the cap.
func (l *Listener) Max() int64 { return l.max }

// Accept returns the next connection within the cap; the ones beyond it are refused here.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &Conn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refused.Add(1)
		if l.onRefuse != nil {
			l.onRefuse()
		}
		// A fresh connection's send buffer is empty: the write does not hold up the accept loop.
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write(refusal)
		_ = c.Close()
	}
}

// Conn is an admitted connection; its first Close gives its place back.
type Conn struct {
	net.Conn
	l      *Listener
	closed atomic.Bool
}

// NetConn is the wrapped connection (for wrappers that look through, as the framing guard does).
func (c *Conn) NetConn() net.Conn { return c.Conn }

// Close closes the connection and, the first time, frees its place.
func (c *Conn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
	return c.Conn.Close()
}
