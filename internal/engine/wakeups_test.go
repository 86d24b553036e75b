package engine_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// TestParkedPopWokenWhenTimeComesDue: what becomes claimable by the passing of time alone (a lease
// that runs out unacked, a retry delay that ends, a delayed message that becomes visible) reaches a
// long-poll parked before it came due. The safety re-check is an hour, longer than any pop here
// waits: only the announcement scheduled for the due instant can answer these pops.
func TestParkedPopWokenWhenTimeComesDue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := store.Open(ctx, store.Options{URL: testenv.NewDatabase(t)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	eng := engine.New(st, slog.New(slog.NewTextHandler(io.Discard, nil)), engine.Options{RecheckInterval: time.Hour})
	eng.Start(ctx)
	t.Cleanup(eng.Stop)

	one, delay := int32(1), int32(300)
	configure := func(q string, o engine.QueueOptions) {
		_, err := eng.Configure(ctx, q, "", "", o)
		require.NoError(t, err)
	}
	push := func(q, tx string) {
		_, err := eng.Push(ctx, []engine.PushItem{{Queue: q, Partition: "p", TransactionID: tx}})
		require.NoError(t, err)
	}
	// parkedPop starts a long-poll, waits until it is parked, runs then and returns the pop's answer.
	parkedPop := func(q string, then func()) *engine.PopResult {
		got := make(chan *engine.PopResult, 1)
		go func() {
			res, err := eng.Pop(ctx, engine.PopRequest{Queue: q, Wait: true, Timeout: 60 * time.Second})
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		require.Eventually(t, func() bool { return eng.Parked() == 1 }, 30*time.Second, 10*time.Millisecond)
		then()
		res := <-got
		require.NotNil(t, res, "the parked pop of %s was not woken when its message came due", q)
		return res
	}

	t.Run("lease expiry", func(t *testing.T) {
		configure("wake-lease", engine.QueueOptions{LeaseTime: &one})
		push("wake-lease", "a")
		first, err := eng.Pop(ctx, engine.PopRequest{Queue: "wake-lease"})
		require.NoError(t, err)
		require.NotNil(t, first)
		again := parkedPop("wake-lease", func() {})
		require.Equal(t, first.Messages[0].ID, again.Messages[0].ID)
		require.NotEqual(t, first.LeaseID, again.LeaseID)
	})
	t.Run("retry delay", func(t *testing.T) {
		configure("wake-retry", engine.QueueOptions{RetryDelay: &delay})
		push("wake-retry", "a")
		first, err := eng.Pop(ctx, engine.PopRequest{Queue: "wake-retry"})
		require.NoError(t, err)
		require.NotNil(t, first)
		again := parkedPop("wake-retry", func() {
			res, err := eng.Ack(ctx, []engine.AckItem{{TransactionID: "a", PartitionID: uuid.MustParse(first.PartitionID),
				LeaseID: first.LeaseID, Status: engine.AckFailed}})
			require.NoError(t, err)
			require.True(t, res[0].Success)
		})
		require.Equal(t, first.Messages[0].ID, again.Messages[0].ID)
		require.Equal(t, int32(1), again.Messages[0].RetryCount)
	})
	t.Run("delayed processing", func(t *testing.T) {
		configure("wake-delayed", engine.QueueOptions{DelayedProcessing: &one})
		res := parkedPop("wake-delayed", func() { push("wake-delayed", "a") })
		require.Equal(t, "a", res.Messages[0].TransactionID)
	})
	t.Run("ack ends a lease", func(t *testing.T) {
		// Held back for the acking consumer (notify.Hub.AnnounceReleased), then handed to the parked pop.
		push("wake-ack", "a")
		push("wake-ack", "b")
		first, err := eng.Pop(ctx, engine.PopRequest{Queue: "wake-ack"})
		require.NoError(t, err)
		require.NotNil(t, first)
		again := parkedPop("wake-ack", func() {
			res, err := eng.Ack(ctx, []engine.AckItem{{TransactionID: "a", PartitionID: uuid.MustParse(first.PartitionID),
				LeaseID: first.LeaseID, Status: engine.AckCompleted}})
			require.NoError(t, err)
			require.True(t, res[0].Success)
		})
		require.Equal(t, "b", again.Messages[0].TransactionID)
	})
}
