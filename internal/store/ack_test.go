package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestAck covers queries/ack.sql: what an ack batch reads and locks, and how it applies a decision.
func TestAck(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()
	const g = store.QueueMode

	// observe runs an ack of targets whose decision records what it was shown and returns eff.
	observe := func(t *testing.T, targets []store.AckTarget, eff store.AckEffects) (map[store.ConsumerKey]store.ConsumerState, []store.ResolvedMessage) {
		t.Helper()
		states := map[store.ConsumerKey]store.ConsumerState{}
		var msgs []store.ResolvedMessage
		require.NoError(t, st.Ack(ctx, targets, func(s map[store.ConsumerKey]*store.ConsumerState, m []store.ResolvedMessage) (store.AckEffects, error) {
			for k, v := range s {
				states[k] = *v
			}
			msgs = m
			return eff, nil
		}))
		return states, msgs
	}
	target := func(p uuid.UUID, group, tx string) store.AckTarget {
		return store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: group}, TransactionID: tx}
	}
	cursor := func(t *testing.T, p uuid.UUID, group string) int64 {
		return scalar[int64](t, st, `SELECT cursor_seq FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, p, group)
	}

	t.Run("ConsumerLock+AckResolve", func(t *testing.T) {
		q := uniq("ack")
		p := configure(t, st, q, store.QueueOptions{RetryLimit: 3, RetryDelay: 250})
		push(t, st, p, "a", "b", "c")
		_, lease := pop(t, st, q, g, "", 2)
		k := store.ConsumerKey{PartitionID: p, Group: g}
		states, msgs := observe(t, []store.AckTarget{target(p, g, "b"), target(p, g, "zzz"), target(p, g, "a")}, store.AckEffects{})
		require.Equal(t, store.ConsumerState{LeaseID: &lease, LeaseLive: true, DeliveredSeq: 2, LastSeq: 3}, states[k])
		require.Equal(t, []store.ResolvedMessage{
			{Found: true, Seq: 2, Partition: "Default", Queue: q, RetryLimit: 3, RetryDelayMs: 250},
			{},
			{Found: true, Seq: 1, Partition: "Default", Queue: q, RetryLimit: 3, RetryDelayMs: 250},
		}, msgs)
		// The lease before is kept when a new one claims the partition.
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1`, p)
		_, lease2 := pop(t, st, q, g, "", 10)
		states, _ = observe(t, []store.AckTarget{target(p, g, "a")}, store.AckEffects{})
		require.Equal(t, store.ConsumerState{LeaseID: &lease2, LeaseLive: true, DeliveredSeq: 3, PrevLeaseID: &lease, PrevDeliveredSeq: 2, LastSeq: 3}, states[k])
	})

	t.Run("ConsumerEnsure", func(t *testing.T) {
		// An ack of a message nobody popped creates the consumer row; an unknown partition creates nothing.
		q := uniq("ack-ensure")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a")
		ghost := uuid.Must(uuid.NewV7())
		states, msgs := observe(t, []store.AckTarget{target(p, "g1", "a"), target(ghost, "g1", "a")}, store.AckEffects{})
		require.Equal(t, map[store.ConsumerKey]store.ConsumerState{{PartitionID: p, Group: "g1"}: {LastSeq: 1}}, states)
		require.True(t, msgs[0].Found)
		require.False(t, msgs[1].Found)
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM partition_consumers WHERE partition_id = $1`, ghost))
	})

	t.Run("AckApply", func(t *testing.T) {
		q := uniq("ack-apply")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a", "b", "c")
		pop(t, st, q, g, "", 10)
		k := store.ConsumerKey{PartitionID: p, Group: g}
		// Kept lease: the cursor moves, the lease runs on.
		observe(t, []store.AckTarget{target(p, g, "a")}, store.AckEffects{Updates: []store.ConsumerUpdate{{ConsumerKey: k, Cursor: 1, Consumed: 1}}})
		require.Equal(t, int64(1), cursor(t, p, g))
		require.True(t, scalar[bool](t, st, `SELECT lease_expires_at > now() FROM partition_consumers WHERE partition_id = $1`, p))
		// Retry with a delay: the lease ends and the partition rests.
		observe(t, []store.AckTarget{target(p, g, "b")}, store.AckEffects{Updates: []store.ConsumerUpdate{{ConsumerKey: k, Cursor: 1, Release: true, Retries: 2, DelayMs: 3_600_000}}})
		var (
			expires *time.Time
			retries int32
			resting bool
			total   int64
		)
		require.NoError(t, store.PoolOf(st).QueryRow(ctx, `SELECT lease_expires_at, batch_retry_count, retry_after > now() + interval '59 minutes', total_consumed
			FROM partition_consumers WHERE partition_id = $1`, p).Scan(&expires, &retries, &resting, &total))
		require.Nil(t, expires)
		require.Equal(t, int32(2), retries)
		require.True(t, resting)
		require.Equal(t, int64(1), total)
		got, _ := pop(t, st, q, g, "", 10)
		require.Empty(t, got, "in its retry delay")
	})

	t.Run("DeadLetterInsert", func(t *testing.T) {
		q := uniq("ack-dlq")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a")
		deadLetter(t, st, p, g, "a", "first")
		// The same message failing again for the group updates its dead letter.
		observe(t, []store.AckTarget{target(p, g, "a")}, store.AckEffects{DeadLetters: []store.DeadLetter{{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: g}, Seq: 1, Error: "second", Retries: 4}}})
		dl, err := st.GetDeadLetters(ctx, p, "a", "")
		require.NoError(t, err)
		require.Len(t, dl, 1)
		require.Equal(t, "second", *dl[0].Error)
		require.Equal(t, int32(4), dl[0].RetryCount)
		require.Equal(t, g, dl[0].Group)
	})

	t.Run("RedeliveryDelete+PendingForgetConsumed", func(t *testing.T) {
		q := uniq("ack-redeliver")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a", "b")
		pop(t, st, q, g, "", 10)
		deadLetter(t, st, p, g, "a", "boom")
		ackDone(t, st, p, g, "a", "b")
		// Consumed to the end: the pending-work record goes.
		require.Equal(t, int64(2), cursor(t, p, g))
		require.Empty(t, pending(t, st, p))
		_, err := st.RetryDeadLetters(ctx, p, "a", g)
		require.NoError(t, err)
		require.Equal(t, []string{g}, pending(t, st, p))
		got, _ := pop(t, st, q, g, "", 10)
		require.Equal(t, []string{"a"}, txids(got))
		k := store.ConsumerKey{PartitionID: p, Group: g}
		states, msgs := observe(t, []store.AckTarget{target(p, g, "a")}, store.AckEffects{})
		require.Equal(t, int32(1), states[k].Redeliveries)
		require.True(t, msgs[0].Redelivery)
		// Settling the redelivery with a cursor at the end forgets the record; the redelivery goes.
		observe(t, []store.AckTarget{target(p, g, "a")}, store.AckEffects{
			Updates:     []store.ConsumerUpdate{{ConsumerKey: k, Cursor: 2, Release: true, Consumed: 1}},
			Redelivered: []store.Redelivered{{ConsumerKey: k, Seq: 1}},
		})
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM redeliveries WHERE partition_id = $1`, p))
		require.Empty(t, pending(t, st, p))
	})

	t.Run("PendingForgetConsumed/not at the end", func(t *testing.T) {
		q := uniq("ack-keep")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a", "b")
		pop(t, st, q, g, "", 1)
		ackDone(t, st, p, g, "a")
		require.Equal(t, []string{g}, pending(t, st, p), "b is still to do")
	})
}
