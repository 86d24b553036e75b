package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// upstreamTransport reaches the brokers over plain HTTP/1.1 keep-alive connections, writing each
// request and reading its answer in the calling goroutine. http.Transport hands every request to a
// writer goroutine and every answer back from a reader goroutine of the connection: on this 2-core
// host those hand-offs were an eighth of the proxy's CPU, and each one a wake-up between the client's
// request and its answer. What the reader goroutine gave, noticing a connection the broker closed
// while it sat idle, a non-blocking peek does before the connection is reused.
//
// https upstreams, and requests asking for a protocol upgrade, go through fallback.
//
// Locking: mu is a leaf, never held across I/O.
type upstreamTransport struct {
	fallback    http.RoundTripper
	dialer      net.Dialer
	maxIdle     int           // idle connections kept per broker address
	idleTimeout time.Duration // an idle connection older than this is closed, not reused

	mu       sync.Mutex // protects idle, sweeping and closed
	idle     map[string][]*upConn
	sweeping bool // a sweep is scheduled
	closed   bool
}

// upstreamIdleTimeout is how long a connection to a broker may sit idle and still be reused: below the
// brokers' own idle timeout (HTTP_IDLE_TIMEOUT_MS, 60 s), so they rarely close one the proxy is about
// to send on.
const upstreamIdleTimeout = 30 * time.Second

// upConn is one connection to a broker; br survives between requests, the writer is borrowed per
// request (writers).
type upConn struct {
	net.Conn
	br        *bufio.Reader
	idleSince time.Time
}

// writers hold the buffers requests are written through: big enough that a push of a few hundred
// items leaves in one write, and not kept per idle connection.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}

func newUpstreamTransport(fallback http.RoundTripper, maxIdle int, idleTimeout time.Duration) *upstreamTransport {
	return &upstreamTransport{fallback: fallback, maxIdle: maxIdle, idleTimeout: idleTimeout,
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, idle: map[string][]*upConn{}}
}

// RoundTrip sends req on an idle connection to its broker, or a new one. A request whose write failed
// on a reused connection is sent once more on a new one: the broker did not get it whole, so it did
// nothing with it.
func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || req.Header.Get("Upgrade") != "" {
		return t.fallback.RoundTrip(req)
	}
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	ctx := req.Context()
	for retried := false; ; retried = true {
		c, reused, err := t.get(ctx, addr)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, wrote, err := t.exchange(ctx, addr, c, req)
		if err == nil {
			return resp, nil
		}
		_ = c.Close()
		if wrote || !reused || retried || ctx.Err() != nil {
			closeBody(req)
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// longAgo is a deadline in the past: it fails the connection's pending reads and writes at once.
var longAgo = time.Unix(1, 0)

// exchange writes req on c and reads the head of its answer; the body is read by the caller, and c goes
// back to the idle set once the body is read to its end. wrote reports that the request left whole.
func (t *upstreamTransport) exchange(ctx context.Context, addr string, c *upConn, req *http.Request) (_ *http.Response, wrote bool, _ error) {
	// The request's end (client gone, upstream timeout) fails whatever c is blocked in; c is then not
	// reused (stop reports it).
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(longAgo) })
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(c)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	if err != nil {
		stop()
		return nil, false, err
	}
	resp, err := http.ReadResponse(c.br, req)
	// 1xx answers (100 Continue) precede the real one; 101 is not asked for (upgrades go to fallback).
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 {
		resp, err = http.ReadResponse(c.br, req)
	}
	if err != nil {
		stop()
		return nil, true, err
	}
	b := &upBody{ReadCloser: resp.Body, t: t, addr: addr, c: c, stop: stop, keep: !resp.Close && !req.Close}
	if resp.Body == http.NoBody {
		b.finish(true)
	} else {
		resp.Body = b
	}
	return resp, true, nil
}

// upBody is an answer's body; read to its end it gives its connection back for the next request,
// closed early it closes the connection (the rest of the answer is still on it).
type upBody struct {
	io.ReadCloser
	t    *upstreamTransport
	addr string
	c    *upConn
	stop func() bool
	keep bool
	done bool
}

func (b *upBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.finish(err == io.EOF)
	}
	return n, err
}

func (b *upBody) Close() error {
	b.finish(false)
	return nil
}

// finish releases the connection once: back to the idle set when the answer was read whole, the
// broker keeps it open and the request's end did not fire on it; closed otherwise.
func (b *upBody) finish(whole bool) {
	if b.done {
		return
	}
	b.done = true
	if b.stop() && whole && b.keep && b.c.br.Buffered() == 0 {
		b.t.put(b.addr, b.c)
		return
	}
	_ = b.c.Close()
}

// get takes the most recently used live idle connection to addr, or dials one.
func (t *upstreamTransport) get(ctx context.Context, addr string) (*upConn, bool, error) {
	now := time.Now()
	for {
		t.mu.Lock()
		list := t.idle[addr]
		if len(list) == 0 {
			t.mu.Unlock()
			break
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[addr] = list[:len(list)-1]
		t.mu.Unlock()
		if now.Sub(c.idleSince) < t.idleTimeout && open(c.Conn) {
			return c, true, nil
		}
		_ = c.Close()
	}
	nc, err := t.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return &upConn{Conn: nc, br: bufio.NewReaderSize(nc, 4<<10)}, false, nil
}

// open reports whether an idle connection can take a request: the broker has not closed it (an idle
// timeout, a restart) and sent nothing unasked. One non-blocking peek at the socket.
func open(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errors.Is(rerr, syscall.EAGAIN)
		return true // never wait for readability
	})
	return err == nil && alive
}

// put makes c idle, unless the broker already has maxIdle idle connections or the transport is closed.
func (t *upstreamTransport) put(addr string, c *upConn) {
	c.idleSince = time.Now()
	t.mu.Lock()
	if t.closed || len(t.idle[addr]) >= t.maxIdle {
		t.mu.Unlock()
		_ = c.Close()
		return
	}
	t.idle[addr] = append(t.idle[addr], c)
	if !t.sweeping {
		t.sweeping = true
		time.AfterFunc(t.idleTimeout, t.sweep)
	}
	t.mu.Unlock()
}

// sweep closes the connections idle past idleTimeout, so that a proxy with no traffic holds no
// connection its broker has given up on; it runs again while any are idle.
func (t *upstreamTransport) sweep() {
	cutoff := time.Now().Add(-t.idleTimeout)
	var expired []*upConn
	t.mu.Lock()
	left := 0
	for addr, list := range t.idle {
		n := 0
		for n < len(list) && !list[n].idleSince.After(cutoff) {
			n++ // oldest first: put appends
		}
		expired = append(expired, list[:n]...)
		if n == len(list) {
			delete(t.idle, addr)
			continue
		}
		kept := copy(list, list[n:])
		clear(list[kept:])
		t.idle[addr] = list[:kept]
		left += kept
	}
	t.sweeping = left > 0 && !t.closed
	if t.sweeping {
		time.AfterFunc(t.idleTimeout, t.sweep)
	}
	t.mu.Unlock()
	for _, c := range expired {
		_ = c.Close()
	}
}

// CloseIdleConnections closes every idle connection and keeps none from now on (Server.Shutdown).
func (t *upstreamTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = map[string][]*upConn{}, true
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			_ = c.Close()
		}
	}
	if ci, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
