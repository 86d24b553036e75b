package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/testenv"
)

// TestPopGivenBackWhenTheClientHangsUp: a consumer closes its connection while its pop's claim runs in
// PostgreSQL. The request's context carries the hang-up to the engine, which gives the claim back:
// the next pop gets the same messages at once, not after the queue's leaseTime, and not as a retry.
// The engine's own test (engine.TestPopGivesBackWhenTheConsumerLeft) covers the cases; this one holds
// the wiring, from the listener to the engine.
func TestPopGivenBackWhenTheClientHangsUp(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := &hangUpListener{Listener: inner, hungUp: make(chan struct{})}
	b := bundle(t, testenv.StartBrokerOn(t, nil, broker.Options{}, ln))
	a := b.raw
	ctx := t.Context()
	configure(t, a, map[string]any{"queue": "gb", "options": map[string]any{"leaseTime": 3600}})
	a.push(pushItem{Queue: "gb", Partition: "p", Payload: 1, TransactionID: "a"},
		pushItem{Queue: "gb", Partition: "p", Payload: 2, TransactionID: "b"})
	path := popPath("gb", "p", "batch", "10")

	// Hold the pop statement: planning it needs a lock on every table it reads. The lock is held on a
	// connection of its own: a transaction reads pg_stat_activity once, so the watch needs another.
	db := openDB(t, b.rb.DatabaseURL)
	lock, err := openDB(t, b.rb.DatabaseURL).Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = lock.Rollback(context.WithoutCancel(ctx)) }()
	_, err = lock.Exec(ctx, `LOCK TABLE queenmq.redeliveries IN ACCESS EXCLUSIVE MODE`)
	require.NoError(t, err)

	// The pop has a client of its own: its connection is the only one that ends.
	consumer, hangUp := context.WithCancel(ctx)
	answered := make(chan error, 1)
	go func() {
		_, err := newAPI(t, b.rb.URL).exchange(consumer, "GET", path, nil)
		answered <- err
	}()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var waiting bool
		assert.NoError(c, db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH RECURSIVE q AS%')`).Scan(&waiting))
		assert.True(c, waiting, "the pop statement waits on the lock")
	}, hangGuard, 5*time.Millisecond)
	hangUp()
	require.Error(t, <-answered, "the consumer's exchange ends with its context")
	// The claim must not finish before the server learns of the hang-up: its connection's read ends, and
	// net/http cancels the request's context on that very return, long before the claim, still to be
	// granted its lock, executed and read back, can answer.
	select {
	case <-ln.hungUp:
	case <-time.After(hangGuard):
		t.Fatal("the broker never read the end of the consumer's connection")
	}
	require.NoError(t, lock.Rollback(ctx))

	var again popResult
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		r, err := a.exchange(ctx, "GET", path, nil)
		if assert.NoError(c, err) && assert.Equal(c, http.StatusOK, r.status, "the claim was not given back: the partition stays leased for leaseTime") {
			assert.NoError(c, json.Unmarshal(r.body, &again))
		}
	}, hangGuard, 20*time.Millisecond)
	var txids []string
	for _, m := range again.Messages {
		txids = append(txids, m.TransactionID)
		require.Zero(t, m.RetryCount)
	}
	require.Equal(t, []string{"a", "b"}, txids)
}

// hangUpListener closes hungUp when the broker's read of one of its connections ends in an error
// other than a deadline: the client went away.
type hangUpListener struct {
	net.Listener
	hungUp chan struct{}
	once   sync.Once
}

func (l *hangUpListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &hangUpConn{Conn: c, l: l}, nil
}

type hangUpConn struct {
	net.Conn
	l *hangUpListener
}

func (c *hangUpConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.l.once.Do(func() { close(c.l.hungUp) })
	}
	return n, err
}
