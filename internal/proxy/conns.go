package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/queen-go/queen/internal/connlimit"
)

// connTracker holds the per-cluster cap and counts the open client connections of this instance per
// cluster; the global cap is the listener's (connlimit). A connection counts against a cluster from its
// first authenticated request for it.
//
// Locking: trackedConn.mu is taken before connTracker.mu; neither is held across I/O.
type connTracker struct {
	maxTotal, maxPerCluster int
	m                       *Metrics
	mu                      sync.Mutex // protects perCluster
	perCluster              map[int64]int
}

func newConnTracker(maxTotal, maxPerCluster int, m *Metrics) *connTracker {
	m.ConnectionLimit.WithLabelValues("global").Set(float64(maxTotal))
	m.ConnectionLimit.WithLabelValues("cluster").Set(float64(maxPerCluster))
	return &connTracker{maxTotal: maxTotal, maxPerCluster: maxPerCluster, m: m, perCluster: map[int64]int{}}
}

// trackedConn is an admitted connection; Close gives its places back, once.
type trackedConn struct {
	net.Conn
	t        *connTracker
	mu       sync.Mutex       // protects clusters and closed
	clusters map[int64]string // the clusters this connection counts against: id → name
	closed   bool
}

// NetConn is the wrapped connection (the framing guard's ConnContext looks through wrappers).
func (c *trackedConn) NetConn() net.Conn { return c.Conn }

func (c *trackedConn) Close() error {
	c.mu.Lock()
	clusters, closed := c.clusters, c.closed
	c.closed, c.clusters = true, nil
	c.mu.Unlock()
	if !closed {
		c.t.release(clusters)
	}
	return c.Conn.Close()
}

func (t *connTracker) release(clusters map[int64]string) {
	t.mu.Lock()
	for id := range clusters {
		if t.perCluster[id]--; t.perCluster[id] <= 0 {
			delete(t.perCluster, id)
		}
	}
	t.mu.Unlock()
	t.m.OpenConnections.Dec()
	for _, name := range clusters {
		t.m.ClusterConnections.WithLabelValues(name).Dec()
	}
}

// limitListener admits connections up to the global cap and tracks the admitted ones. One beyond the
// cap is answered 503 connection_limit at once and closed, without reading it: a cap that waited for
// the request would let a client that sends nothing hold the connection for the header timeout,
// uncounted.
type limitListener struct {
	*connlimit.Listener
	t *connTracker
}

func newLimitListener(ln net.Listener, t *connTracker) *limitListener {
	return &limitListener{t: t, Listener: connlimit.New(ln, t.maxTotal,
		t.m.ConnectionsRefused.WithLabelValues("global").Inc)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.t.m.OpenConnections.Inc()
	return &trackedConn{Conn: c, t: l.t}, nil
}

type connKey struct{}

// connContext makes the tracked connection reachable from its requests.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// attach counts the request's connection against the cluster on its first request for it; beyond the
// per-cluster cap the request is refused and the connection closed after the answer.
func (t *connTracker) attach(r *http.Request, id int64, name string) error {
	c, _ := r.Context().Value(connKey{}).(*trackedConn)
	if c == nil {
		return nil // not served through Serve (a handler test): nothing to count
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.clusters[id]; ok || c.closed {
		return nil
	}
	t.mu.Lock()
	ok := t.perCluster[id] < t.maxPerCluster
	if ok {
		t.perCluster[id]++
	}
	t.mu.Unlock()
	if !ok {
		t.m.ConnectionsRefused.WithLabelValues("cluster").Inc()
		return newError(CodeConnectionLimit, fmt.Sprintf("too many open connections to cluster %s (max %d per instance)", name, t.maxPerCluster))
	}
	if c.clusters == nil {
		c.clusters = map[int64]string{}
	}
	c.clusters[id] = name
	t.m.ClusterConnections.WithLabelValues(name).Inc()
	return nil
}
