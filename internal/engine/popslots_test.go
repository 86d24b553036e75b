package engine_test

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestLongPollBurst: hundreds of long-polling consumers arriving at once, on a pool far too small to
// serve them within its acquire timeout, each get their message and ack it without an error. The
// long-polls wait for the pool as long as they would wait for a message, and the acks keep a
// connection of their own.
func TestLongPollBurst(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// Hot pool of 2: one pop slot, one connection for the ack worker.
	st, err := store.Open(ctx, store.Options{URL: testenv.NewDatabase(t), PoolSize: 4, AcquireTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	eng := engine.New(st, slog.New(slog.NewTextHandler(io.Discard, nil)), engine.Options{})
	eng.Start(ctx)
	t.Cleanup(eng.Stop)

	const n = 300
	items := make([]engine.PushItem, n)
	for i := range items {
		items[i] = engine.PushItem{Queue: "burst", Partition: fmt.Sprintf("p%d", i), TransactionID: fmt.Sprintf("m%d", i)}
	}
	_, err = eng.Push(ctx, items)
	require.NoError(t, err)

	// Both connections of the hot pool are established, and used, right before the burst: a wait spent
	// establishing one, or pinging one idle for over a second (pgxpool does before handing it out),
	// reads as an unreachable database, which is not what this test is about. Establishing them is
	// itself bounded by the 100 ms acquire timeout, which a loaded host (the whole suite under -race on
	// two cores) can pass: the warm-up is tried until the connections are there.
	_, err = eng.Push(ctx, []engine.PushItem{{Queue: "warm", TransactionID: "w"}})
	require.NoError(t, err)
	var warm *engine.PopResult
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		warm, err = eng.Pop(ctx, engine.PopRequest{Queue: "warm"})
		if assert.NoError(c, err) && assert.NotNil(c, warm) {
			assert.Len(c, warm.Messages, 1)
		}
	}, 30*time.Second, 10*time.Millisecond)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := eng.Ack(ctx, []engine.AckItem{{TransactionID: "w", PartitionID: uuid.MustParse(warm.PartitionID), LeaseID: warm.LeaseID}})
		assert.NoError(c, err)
	}, 30*time.Second, 10*time.Millisecond)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for i := range n {
		wg.Go(func() {
			res, err := eng.Pop(ctx, engine.PopRequest{Queue: "burst", Partition: fmt.Sprintf("p%d", i), Wait: true, Timeout: 30 * time.Second})
			if err != nil || res == nil || len(res.Messages) != 1 {
				fail("pop p%d: %v %v", i, res, err)
				return
			}
			m := res.Messages[0]
			acks, err := eng.Ack(ctx, []engine.AckItem{{TransactionID: m.TransactionID, PartitionID: uuid.MustParse(m.PartitionID), LeaseID: m.LeaseID}})
			if err != nil || !acks[0].Success {
				fail("ack p%d: %v %v", i, acks, err)
			}
		})
	}
	wg.Wait()
	require.Empty(t, failures)
}
