package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPopGivenBackWhenTheClientHangsUp: a consumer closes its connection while its pop's claim runs in
// PostgreSQL. The request's context carries the hang-up to the engine, which gives the claim back:
// the next pop gets the same messages at once, not after the queue's leaseTime, and not as a retry.
// The engine's own test (engine.TestPopGivesBackWhenTheConsumerLeft) covers the cases; this one holds
// the wiring, from the listener to the engine.
func TestPopGivenBackWhenTheClientHangsUp(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
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

	consumer, hangUp := context.WithCancel(ctx)
	answered := make(chan error, 1)
	go func() {
		_, err := a.exchange(consumer, "GET", path, nil)
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
	// The server learns of the hang-up from its read of the closed connection, a loopback event; the
	// pause keeps the claim from finishing before that.
	time.Sleep(300 * time.Millisecond)
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
