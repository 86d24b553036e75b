package store_test

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// blackhole forwards TCP connections to target until Freeze: from then on the connections open at that
// moment swallow what either side sends and close nothing, as a session does whose network path died
// without a FIN. Connections opened later are forwarded.
type blackhole struct {
	ln     net.Listener
	target string
	mu     sync.Mutex // protects frozen
	frozen []*atomic.Bool
}

func newBlackhole(t *testing.T, target string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &blackhole{ln: ln, target: target}
	var conns sync.WaitGroup
	var open []net.Conn
	var openMu sync.Mutex
	keep := func(c net.Conn) {
		openMu.Lock()
		open = append(open, c)
		openMu.Unlock()
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			keep(c)
			keep(up)
			dead := new(atomic.Bool)
			b.mu.Lock()
			b.frozen = append(b.frozen, dead)
			b.mu.Unlock()
			conns.Add(2)
			go func() { defer conns.Done(); pipe(up, c, dead) }()
			go func() { defer conns.Done(); pipe(c, up, dead) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		openMu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		openMu.Unlock()
		conns.Wait()
	})
	return b
}

func pipe(dst, src net.Conn, dead *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			_ = dst.Close()
			return
		}
		if dead.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			_ = src.Close()
			return
		}
	}
}

// Freeze cuts the connections open now.
func (b *blackhole) Freeze() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.frozen {
		d.Store(true)
	}
}

// TestListenReplacesASilentlyCutSession: a LISTEN session whose path dies without a FIN is noticed by
// its probe and replaced; the reconnect is reported (parked pops re-check) and notifications flow again.
func TestListenReplacesASilentlyCutSession(t *testing.T) {
	t.Parallel()
	direct := testenv.NewDatabase(t)
	u, err := url.Parse(direct)
	require.NoError(t, err)
	hole := newBlackhole(t, u.Host)
	u.Host = hole.ln.Addr().String()

	ctx := t.Context()
	st, err := store.Open(ctx, store.Options{URL: direct, PoolSize: 2, ListenURL: u.String()})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	store.SetListenProbe(st, 100*time.Millisecond)

	channel := "cut_" + uniq("chan")
	connected := make(chan struct{}, 4)
	got := make(chan string, 10)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done }) // before st.Close
	go func() {
		defer close(done)
		_ = st.Listen(lctx, channel, func() { connected <- struct{}{} }, func(p string) { got <- p })
	}()
	<-connected
	notify := func(p string) {
		_, err := store.PoolOf(st).Exec(ctx, `SELECT pg_notify($1, $2)`, channel, p)
		require.NoError(t, err)
	}
	notify("before")
	require.Equal(t, "before", <-got)

	hole.Freeze()
	notify("lost")
	select {
	case <-connected:
	case <-time.After(30 * time.Second):
		t.Fatal("the cut LISTEN session was not replaced")
	}
	notify("after")
	require.Equal(t, "after", <-got)
}
