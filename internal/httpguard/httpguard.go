// Package httpguard closes the request-smuggling gap net/http leaves open: a request carrying both
// Content-Length and Transfer-Encoding (RFC 9112 §6.1, §6.3) is framed by its chunked coding, its
// Content-Length is deleted before any handler can see it, and the connection stays open, so a second
// request hidden behind the first is served. The guard follows each connection's HTTP/1 framing as the
// server reads it and answers such a request 400 with the connection closed. Both the broker and the
// proxy install it on their servers.
package httpguard

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// Install arms srv: it wraps srv.Handler and srv.ConnContext (keeping any already set) and returns ln
// wrapped; serve srv on the returned listener. Call it once srv.Handler is set. A refused request is
// answered 400 {"error":Message}.
func Install(srv *http.Server, ln net.Listener) net.Listener {
	return InstallFunc(srv, ln, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"`+Message+`"}`+"\n")
	})
}

// InstallFunc is Install with the refusal written by refuse (a server with its own error envelope);
// the guard has set Connection: close before calling it, and refuse must answer with a 400.
func InstallFunc(srv *http.Server, ln net.Listener, refuse func(w http.ResponseWriter, r *http.Request)) net.Listener {
	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = handler{next: next, refuse: refuse}
	// OPTIONS * is answered by net/http itself without reaching a handler, so its verdict would never
	// be taken; the guard answers it instead, as net/http would.
	srv.DisableGeneralOptionsHandler = true
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		for c != nil {
			if gc, ok := c.(*conn); ok {
				return context.WithValue(ctx, connKey{}, gc)
			}
			u, ok := c.(interface{ NetConn() net.Conn })
			if !ok {
				break
			}
			c = u.NetConn()
		}
		return ctx
	}
	return listener{ln}
}

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c}, nil
}

type connKey struct{}

// conn follows the framing of the bytes the server reads and queues one verdict per request head.
type conn struct {
	net.Conn
	mu       sync.Mutex // protects sc and verdicts
	sc       Scanner
	verdicts []Verdict
}

// NetConn is the wrapped connection.
func (c *conn) NetConn() net.Conn { return c.Conn }

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.verdicts = c.sc.Feed(p[:n], c.verdicts)
		c.mu.Unlock()
	}
	return n, err
}

// next takes the verdict of the connection's next request. The server parses a head only after its
// bytes went through Read, so a verdict is always queued unless the scanner lost the framing.
func (c *conn) next() Verdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.verdicts) == 0 {
		return Lost
	}
	v := c.verdicts[0]
	c.verdicts = c.verdicts[1:]
	return v
}

type handler struct {
	next   http.Handler
	refuse func(w http.ResponseWriter, r *http.Request)
}

// Message is the error text of a refused request.
const Message = "conflicting Content-Length and Transfer-Encoding"

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v := OK
	if c, ok := r.Context().Value(connKey{}).(*conn); ok && r.ProtoMajor == 1 {
		v = c.next()
	}
	switch v {
	case Conflict:
		w.Header().Set("Connection", "close")
		h.refuse(w, r)
		return
	case Lost:
		// The server accepted framing the scanner could not follow: serve this request, then close,
		// since what follows on the connection can no longer be vouched for.
		w.Header().Set("Connection", "close")
	}
	if r.Method == http.MethodOptions && r.RequestURI == "*" {
		w.Header().Set("Content-Length", "0")
		return
	}
	h.next.ServeHTTP(w, r)
}
