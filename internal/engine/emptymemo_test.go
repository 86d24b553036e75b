package engine_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestEmptyMemo: a long-poll of one partition that found it empty lets the next one park without a
// statement once the pending-work rows confirm it (notify/empty.go), and nothing that makes the
// partition claimable is missed: a push here forgets the entry at once, a push no notification
// announced is found by the next check, which wakes the parked pop, and a partition whose work is
// only leased away is never confirmed empty.
func TestEmptyMemo(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := testenv.NewDatabase(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Options{URL: url})
		require.NoError(t, err)
		t.Cleanup(st.Close)
		return st
	}
	st := open()
	hub := notify.New(st, log)
	require.NoError(t, hub.Start(ctx))
	t.Cleanup(hub.Stop)
	// A 16 s age: confirmed entries are checked again after 8 s (8.5 s at most, with the tick). A pop
	// that waits at most 1.25 times that arms no safety re-check of its own.
	eng := engine.New(st, log, engine.Options{Hub: hub, RecheckInterval: 16 * time.Second})
	eng.Start(ctx)
	t.Cleanup(eng.Stop)
	// Another broker whose hub never runs: its pushes reach no other broker's waiters.
	st2 := open()
	silent := engine.New(st2, log, engine.Options{Hub: notify.New(st2, log)})
	silent.Start(ctx)
	t.Cleanup(silent.Stop)

	pop := func(partition string, timeout time.Duration) *engine.PopResult {
		res, err := eng.Pop(ctx, engine.PopRequest{Queue: "memo", Partition: partition, Wait: true, Timeout: timeout})
		require.NoError(t, err)
		return res
	}
	push := func(e *engine.Engine, partition, tx string) {
		_, err := e.Push(ctx, []engine.PushItem{{Queue: "memo", Partition: partition, TransactionID: tx}})
		require.NoError(t, err)
	}
	confirmed := func(partition string) bool { return hub.KnownEmpty("memo", partition, engine.QueueMode) }

	push(eng, "p", "first")
	require.Len(t, pop("p", time.Second).Messages, 1) // not acked: the lease keeps it from the next pop
	_, err := eng.Configure(ctx, "memo", "", "", engine.QueueOptions{})
	require.NoError(t, err)

	t.Run("a push forgets the entry", func(t *testing.T) {
		require.Nil(t, pop("a", 100*time.Millisecond))
		require.Eventually(t, func() bool { return confirmed("a") }, 5*time.Second, 20*time.Millisecond)
		require.Nil(t, pop("a", 100*time.Millisecond), "a confirmed partition answers empty without a statement")
		push(eng, "a", "a1")
		require.False(t, confirmed("a"))
		res := pop("a", time.Second)
		require.NotNil(t, res)
		require.Equal(t, "a1", res.Messages[0].TransactionID)
	})

	t.Run("an unannounced push is found and wakes the parked pop", func(t *testing.T) {
		require.Nil(t, pop("b", 100*time.Millisecond))
		require.Eventually(t, func() bool { return confirmed("b") }, 5*time.Second, 20*time.Millisecond)
		got := make(chan *engine.PopResult, 1)
		go func() {
			// 18 s: no safety re-check is armed, so only the memo's check, waking it, can deliver the
			// message before the timeout answers empty.
			res, err := eng.Pop(ctx, engine.PopRequest{Queue: "memo", Partition: "b", Wait: true, Timeout: 18 * time.Second})
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		require.Eventually(t, func() bool { return eng.Parked() == 1 }, 5*time.Second, 10*time.Millisecond)
		push(silent, "b", "b1")
		res := <-got
		require.NotNil(t, res, "the check that found the unannounced push did not wake the parked pop")
		require.Equal(t, "b1", res.Messages[0].TransactionID)
	})

	t.Run("leased work is never confirmed empty", func(t *testing.T) {
		require.Nil(t, pop("p", 100*time.Millisecond), "its one message is leased")
		require.Never(t, func() bool { return confirmed("p") }, 1500*time.Millisecond, 20*time.Millisecond, "over three checks")
	})
}
