package store_test

import (
	"context"
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
		dl, err := st.DeadLetters().GetDeadLetters(ctx, p, "a", "")
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
		_, err := st.DeadLetters().RetryDeadLetters(ctx, p, "a", g)
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

// TestAckOneStatement covers AckCompletions (queries/ack.sql): a batch of completions it accepts is
// applied as the full path would (cursor, lease, counters, pending-work record) and answered per item;
// a batch with any item it does not take changes nothing. The rules themselves are compared with the
// full path's in the engine (TestAckOneStatement).
func TestAckOneStatement(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()
	const g = store.QueueMode
	item := func(p uuid.UUID, tx string, lease *uuid.UUID) store.AckCompletion {
		return store.AckCompletion{AckTarget: store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: g}, TransactionID: tx}, LeaseID: lease}
	}
	row := func(t *testing.T, p uuid.UUID) string {
		return scalar[string](t, st, `SELECT format('cursor=%s live=%s consumed=%s retries=%s', cursor_seq, (lease_expires_at IS NOT NULL)::text,
			total_consumed, batch_retry_count) FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, p, g)
	}

	t.Run("AckCompletions/applied", func(t *testing.T) {
		q := uniq("ackone")
		p := configure(t, st, q, store.QueueOptions{})
		push(t, st, p, "a", "b", "c")
		_, lease := pop(t, st, q, g, "", 2)
		out, applied, err := st.AckCompletions(ctx, []store.AckCompletion{item(p, "a", &lease)})
		require.NoError(t, err)
		require.True(t, applied)
		require.Equal(t, []store.CompletedAck{{Seq: 1, Partition: "Default", Queue: q}}, out)
		require.Equal(t, "cursor=1 live=true consumed=1 retries=0", row(t, p))
		require.Equal(t, []string{g}, pending(t, st, p))

		// b ends the lease; a again is a repeated completion.
		out, applied, err = st.AckCompletions(ctx, []store.AckCompletion{item(p, "b", nil), item(p, "a", &lease)})
		require.NoError(t, err)
		require.True(t, applied)
		require.Equal(t, []store.CompletedAck{{Seq: 2, Partition: "Default", Queue: q, Released: true}, {Seq: 1, Partition: "Default", Queue: q, Noop: true}}, out)
		require.Equal(t, "cursor=2 live=false consumed=2 retries=0", row(t, p))
		require.Equal(t, []string{g}, pending(t, st, p), "c is still to consume")

		_, lease = pop(t, st, q, g, "", 2)
		_, applied, err = st.AckCompletions(ctx, []store.AckCompletion{item(p, "c", &lease)})
		require.NoError(t, err)
		require.True(t, applied)
		require.Empty(t, pending(t, st, p), "the partition is consumed to its end")
	})

	t.Run("AckCompletions/declined", func(t *testing.T) {
		q := uniq("ackone-no")
		p := configure(t, st, q, store.QueueOptions{})
		push(t, st, p, "a", "b", "c")
		_, lease := pop(t, st, q, g, "", 2)
		other := uuid.New()
		for name, items := range map[string][]store.AckCompletion{
			"another lease":        {item(p, "a", &lease), item(p, "b", &other)},
			"not delivered":        {item(p, "a", &lease), item(p, "c", nil)},
			"unknown message":      {item(p, "a", &lease), item(p, "zzz", &lease)},
			"unknown partition":    {item(p, "a", &lease), item(uuid.New(), "a", nil)},
			"consumer row missing": {item(p, "a", &lease), {AckTarget: store.AckTarget{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: "g9"}, TransactionID: "a"}}},
		} {
			out, applied, err := st.AckCompletions(ctx, items)
			require.NoError(t, err, name)
			require.False(t, applied, name)
			require.Nil(t, out, name)
			require.Equal(t, "cursor=0 live=true consumed=0 retries=0", row(t, p), name)
		}
		// A retried dead letter of the group on the partition: the full path settles it.
		exec(t, st, `INSERT INTO redeliveries (partition_id, consumer_group, seq) VALUES ($1, $2, 3)`, p, g)
		_, applied, err := st.AckCompletions(ctx, []store.AckCompletion{item(p, "a", &lease)})
		require.NoError(t, err)
		require.False(t, applied)
		require.Equal(t, "cursor=0 live=true consumed=0 retries=0", row(t, p))
	})

	t.Run("AckCompletions/decides on the locked row", func(t *testing.T) {
		// The statement waits for a consumer row another transaction holds and then decides on the
		// version that transaction committed, not on its own snapshot: a completion under a lease that
		// was replaced meanwhile is declined, one whose message was acknowledged meanwhile is a noop.
		q := uniq("ackone-race")
		p := configure(t, st, q, store.QueueOptions{})
		push(t, st, p, "a", "b")
		_, lease := pop(t, st, q, g, "", 2)
		run := func(t *testing.T, change string, items []store.AckCompletion) ([]store.CompletedAck, bool) {
			t.Helper()
			tx, err := store.PoolOf(st).Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			_, err = tx.Exec(ctx, change, p, g)
			require.NoError(t, err)
			type answer struct {
				out     []store.CompletedAck
				applied bool
				err     error
			}
			done := make(chan answer, 1)
			go func() {
				out, applied, err := st.AckCompletions(ctx, items)
				done <- answer{out, applied, err}
			}()
			// Commit only once the statement waits for the row lock.
			var early *answer // the statement answered without waiting
			require.Eventually(t, func() bool {
				n := scalar[int64](t, st, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[])%'`)
				if n > 0 {
					return true
				}
				select {
				case a := <-done:
					early = &a
					return true
				default:
					return false
				}
			}, 10*time.Second, 10*time.Millisecond, "the statement waits for the row lock")
			if early != nil {
				t.Fatalf("the statement did not wait for the row lock: %+v", *early)
			}
			require.NoError(t, tx.Commit(ctx))
			a := <-done
			require.NoError(t, a.err)
			return a.out, a.applied
		}
		// Message a acknowledged by another transaction: a again is a repeated completion.
		out, applied := run(t, `UPDATE partition_consumers SET cursor_seq = 1, total_consumed = 1 WHERE partition_id = $1 AND consumer_group = $2`,
			[]store.AckCompletion{item(p, "a", &lease)})
		require.True(t, applied)
		require.Equal(t, []store.CompletedAck{{Seq: 1, Partition: "Default", Queue: q, Noop: true}}, out)
		require.Equal(t, "cursor=1 live=true consumed=1 retries=0", row(t, p))
		// The lease replaced by another: b under the old one is declined, and nothing changes.
		_, applied = run(t, `UPDATE partition_consumers SET lease_id = gen_random_uuid() WHERE partition_id = $1 AND consumer_group = $2`,
			[]store.AckCompletion{item(p, "b", &lease)})
		require.False(t, applied)
		require.Equal(t, "cursor=1 live=true consumed=1 retries=0", row(t, p))
	})

	whole := func(p uuid.UUID, id uuid.UUID, n int32) store.LeaseAck {
		return store.LeaseAck{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: g}, LeaseID: id, Count: n}
	}

	t.Run("AckLeases/applied", func(t *testing.T) {
		q := uniq("ackleases")
		p := configure(t, st, q, store.QueueOptions{})
		push(t, st, p, "a", "b", "c")
		_, l1 := pop(t, st, q, g, "", 2)
		applied, err := st.AckLeases(ctx, []store.LeaseAck{whole(p, l1, 2)})
		require.NoError(t, err)
		require.True(t, applied)
		require.Equal(t, "cursor=2 live=false consumed=2 retries=0", row(t, p))
		require.Equal(t, []string{g}, pending(t, st, p), "c is still to consume")

		// Two leases of two partitions in one statement; the second consumes its partition to the end.
		p2 := partition(t, st, q, "p2")
		push(t, st, p2, "x")
		_, l2 := pop(t, st, q, g, "", 1)
		_, l3 := pop(t, st, q, g, "p2", 1)
		applied, err = st.AckLeases(ctx, []store.LeaseAck{whole(p2, l3, 1), whole(p, l2, 1)})
		require.NoError(t, err)
		require.True(t, applied)
		require.Equal(t, "cursor=3 live=false consumed=3 retries=0", row(t, p))
		require.Empty(t, pending(t, st, p))
		require.Empty(t, pending(t, st, p2))
	})

	t.Run("AckLeases/declined", func(t *testing.T) {
		q := uniq("ackleases-no")
		p := configure(t, st, q, store.QueueOptions{})
		push(t, st, p, "a", "b", "c")
		_, l := pop(t, st, q, g, "", 2)
		for name, leases := range map[string][]store.LeaseAck{
			"another lease":        {whole(p, uuid.New(), 2)},
			"another count":        {whole(p, l, 3)},
			"unknown partition":    {whole(p, l, 2), whole(uuid.New(), l, 1)},
			"consumer row missing": {{ConsumerKey: store.ConsumerKey{PartitionID: p, Group: "g9"}, LeaseID: l, Count: 2}},
		} {
			applied, err := st.AckLeases(ctx, leases)
			require.NoError(t, err, name)
			require.False(t, applied, name)
			require.Equal(t, "cursor=0 live=true consumed=0 retries=0", row(t, p), name)
		}
		// Partly acked already: the cursor is no longer where the claim found it.
		ackDone(t, st, p, g, "a")
		before := row(t, p)
		applied, err := st.AckLeases(ctx, []store.LeaseAck{whole(p, l, 2)})
		require.NoError(t, err)
		require.False(t, applied)
		require.Equal(t, before, row(t, p))

		q2 := uniq("ackleases-no")
		p2 := configure(t, st, q2, store.QueueOptions{})
		push(t, st, p2, "a")
		_, l2 := pop(t, st, q2, g, "", 1)
		exec(t, st, `INSERT INTO redeliveries (partition_id, consumer_group, seq) VALUES ($1, $2, 1)`, p2, g)
		applied, err = st.AckLeases(ctx, []store.LeaseAck{whole(p2, l2, 1)})
		require.NoError(t, err)
		require.False(t, applied, "a retried dead letter of the group on the partition")
		exec(t, st, `DELETE FROM redeliveries WHERE partition_id = $1`, p2)
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1`, p2)
		applied, err = st.AckLeases(ctx, []store.LeaseAck{whole(p2, l2, 1)})
		require.NoError(t, err)
		require.False(t, applied, "an expired lease")

		q3 := uniq("ackleases-no")
		p3 := configure(t, st, q3, store.QueueOptions{})
		push(t, st, p3, "a", "b")
		_, l3 := pop(t, st, q3, g, "", 2)
		exec(t, st, `DELETE FROM messages WHERE partition_id = $1 AND transaction_id = 'b'`, p3)
		applied, err = st.AckLeases(ctx, []store.LeaseAck{whole(p3, l3, 2)})
		require.NoError(t, err)
		require.False(t, applied, "a message of the claim deleted meanwhile")
	})

	t.Run("AckCompletions/commit mode", func(t *testing.T) {
		// An applied batch commits as acks do (the database's synchronous_commit); a declined one wrote
		// nothing but row locks and does not wait for the WAL flush.
		q := uniq("ackone-commit")
		p := configure(t, st, q, store.QueueOptions{})
		push(t, st, p, "a")
		_, lease := pop(t, st, q, g, "", 1)
		c, err := store.HotPoolOf(st).Acquire(ctx)
		require.NoError(t, err)
		defer c.Release()
		var def string
		require.NoError(t, c.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&def))
		for _, lid := range []uuid.UUID{uuid.New(), lease} {
			tx, err := c.Begin(ctx)
			require.NoError(t, err)
			rows, err := tx.Query(ctx, store.Queries["AckCompletions"], []uuid.UUID{p}, []string{g}, []string{"a"}, []uuid.UUID{lid}, nil)
			require.NoError(t, err)
			n := 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err())
			var mode string
			require.NoError(t, tx.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&mode))
			if lid == lease {
				require.Equal(t, 1, n)
				require.Equal(t, def, mode, "applied")
			} else {
				require.Zero(t, n)
				require.Equal(t, "off", mode, "declined")
			}
			require.NoError(t, tx.Rollback(ctx))
		}
	})
}
