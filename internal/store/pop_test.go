package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestPop covers queries/pop.sql: what one Pop claims and delivers, and what it leaves claimable.
func TestPop(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()
	const g = store.QueueMode

	popWith := func(t *testing.T, p store.PopParams) []store.PoppedMessage {
		t.Helper()
		if p.LeaseID == uuid.Nil {
			p.LeaseID = uuid.Must(uuid.NewV7())
		}
		if p.Group == "" {
			p.Group = g
		}
		got, err := st.Pop(ctx, p)
		require.NoError(t, err)
		return got
	}

	t.Run("Pop/batch in seq order under a lease", func(t *testing.T) {
		q := uniq("pop")
		p := partition(t, st, q, "Default")
		push(t, st, p, "a", "b", "c")
		got, lease := pop(t, st, q, g, "", 2)
		require.Equal(t, []string{"a", "b"}, txids(got))
		require.Equal(t, "Default", got[0].Partition)
		require.Equal(t, p, got[0].PartitionID)
		require.JSONEq(t, `{"tx":"a"}`, string(got[0].Payload))
		require.Equal(t, lease, scalar[uuid.UUID](t, st, `SELECT lease_id FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, p, g))
		require.Equal(t, p[:8], lease[:8], "the lease id starts like its partition's id, by which it is found again")
		leaseSeconds := func(p uuid.UUID) float64 {
			return scalar[float64](t, st, `SELECT extract(epoch FROM lease_expires_at - last_claimed_at)::float8 FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, p, g)
		}
		require.Equal(t, 300.0, leaseSeconds(p), "an auto-created queue's lease time")
		for lt, want := range map[int32]float64{30: 30, 0: 60} { // no lease time: 60 seconds
			q := uniq("pop-lease")
			p := configure(t, st, q, store.QueueOptions{LeaseTime: lt})
			push(t, st, p, "a")
			pop(t, st, q, g, "", 1)
			require.Equal(t, want, leaseSeconds(p), "lease time %d", lt)
		}
		// Leased: nothing more for the same group; another (subscribed) group reads the partition
		// independently.
		again, _ := pop(t, st, q, g, "", 10)
		require.Empty(t, again)
		ok, err := st.Groups().EnsureSubscription(ctx, q, "other", store.SubscribeAll, time.Time{})
		require.NoError(t, err)
		require.True(t, ok)
		other, _ := pop(t, st, q, "other", "", 10)
		require.Equal(t, []string{"a", "b", "c"}, txids(other))
		// Once the lease expires, the same messages are delivered again.
		exec(t, st, `UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second' WHERE partition_id = $1 AND consumer_group = $2`, p, g)
		again, _ = pop(t, st, q, g, "", 10)
		require.Equal(t, []string{"a", "b", "c"}, txids(again))
	})

	t.Run("Pop/empty", func(t *testing.T) {
		got, _ := pop(t, st, uniq("pop-none"), g, "", 10)
		require.Empty(t, got, "unknown queue")
		q := uniq("pop-empty")
		partition(t, st, q, "Default")
		got, _ = pop(t, st, q, g, "", 10)
		require.Empty(t, got, "queue without messages")
		got, _ = pop(t, st, q, g, "nope", 10)
		require.Empty(t, got, "unknown partition")
	})

	t.Run("Pop/named partition and maxPartitions", func(t *testing.T) {
		q := uniq("pop-parts")
		pa, pb, pc := partition(t, st, q, "a"), partition(t, st, q, "b"), partition(t, st, q, "c")
		push(t, st, pa, "a1", "a2")
		push(t, st, pb, "b1")
		push(t, st, pc, "c1")
		got, _ := pop(t, st, q, g, "b", 10)
		require.Equal(t, []string{"b1"}, txids(got))
		// Two partitions at most; the batch is a budget over them, in claim order (the line's front first).
		got = popWith(t, store.PopParams{Queue: q, MaxPartitions: 2, Batch: 2})
		require.Equal(t, []string{"a1", "a2"}, txids(got))
		got = popWith(t, store.PopParams{Queue: q, MaxPartitions: 2, Batch: 10})
		require.Equal(t, []string{"c1"}, txids(got), "a and b are leased")
	})

	t.Run("Pop/variants", func(t *testing.T) {
		// Each pop runs the variant of the statement made for it (popShape): the common one (wildcard,
		// one partition, no autoAck) carries none of the parts it would never run, and the others carry
		// theirs. What each variant delivers, the other subtests check.
		autoAck := []string{"DELETE FROM pending_partitions", "DELETE FROM redeliveries"}
		multi := []string{"claimed_rest AS", "ORDER BY claim_order, seq LIMIT $5", "JOIN claimed c ON"}
		named := []string{"p.name = $3::text"}
		a := "a"
		for _, c := range []struct {
			name    string
			p       store.PopParams
			has     [][]string
			hasNone [][]string
		}{
			{"common", store.PopParams{MaxPartitions: 1, Batch: 2}, nil, [][]string{autoAck, multi, named}},
			{"autoAck", store.PopParams{MaxPartitions: 1, Batch: 2, AutoAck: true}, [][]string{autoAck}, [][]string{multi, named}},
			{"multi", store.PopParams{MaxPartitions: 2, Batch: 4}, [][]string{multi}, [][]string{autoAck, named}},
			{"multi autoAck", store.PopParams{MaxPartitions: 2, Batch: 4, AutoAck: true}, [][]string{multi, autoAck}, [][]string{named}},
			{"named", store.PopParams{Partition: &a, MaxPartitions: 2, Batch: 2}, [][]string{named}, [][]string{autoAck, multi}},
			{"named autoAck", store.PopParams{Partition: &a, MaxPartitions: 1, Batch: 2, AutoAck: true}, [][]string{named, autoAck}, [][]string{multi}},
		} {
			t.Run(c.name, func(t *testing.T) {
				q := uniq("pop-variant")
				push(t, st, partition(t, st, q, "a"), "a1", "a2")
				push(t, st, partition(t, st, q, "b"), "b1", "b2")
				p := c.p
				p.Queue, p.Group, p.LeaseID = q, g, uuid.Must(uuid.NewV7())
				lctx, log := store.WithStatementLog(ctx)
				got, err := st.Pop(lctx, p)
				require.NoError(t, err)
				require.Len(t, got, p.Batch)
				sql := store.PopText(p)
				require.Equal(t, []string{sql}, log.Statements())
				for _, parts := range c.has {
					for _, part := range parts {
						require.Contains(t, sql, part)
					}
				}
				for _, parts := range c.hasNone {
					for _, part := range parts {
						require.NotContains(t, sql, part)
					}
				}
			})
		}
	})

	t.Run("Pop/autoAck and rotation", func(t *testing.T) {
		q := uniq("pop-auto")
		pa, pb := partition(t, st, q, "a"), partition(t, st, q, "b")
		push(t, st, pa, "a1", "a2")
		push(t, st, pb, "b1", "b2")
		// A claimed partition goes to the back of the line, so the partitions take turns.
		var order []string
		for range 4 {
			got := popWith(t, store.PopParams{Queue: q, MaxPartitions: 1, Batch: 1, AutoAck: true})
			require.Len(t, got, 1)
			order = append(order, got[0].TransactionID)
		}
		require.Equal(t, []string{"a1", "b1", "a2", "b2"}, order)
		// autoAck moved the cursor without a lease and, at the end of the partition, dropped its record.
		require.Equal(t, int64(2), scalar[int64](t, st, `SELECT cursor_seq FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, pa, g))
		require.Nil(t, scalar[*time.Time](t, st, `SELECT lease_expires_at FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, pa, g))
		require.Equal(t, int64(2), scalar[int64](t, st, `SELECT total_consumed FROM partition_consumers WHERE partition_id = $1 AND consumer_group = $2`, pa, g))
		require.Empty(t, pending(t, st, pa))
		require.Empty(t, popWith(t, store.PopParams{Queue: q, MaxPartitions: 2, Batch: 10, AutoAck: true}))
	})

	t.Run("Pop/not claimable", func(t *testing.T) {
		for _, c := range []struct {
			name string
			opts store.QueueOptions
			set  string // applied to the group's cursor row after a first pop, "" for none
		}{
			{name: "window buffer", opts: store.QueueOptions{WindowBuffer: 3600}},
			{name: "delayed processing", opts: store.QueueOptions{DelayedProcessing: 3600}},
			{name: "retry delay", set: `retry_after = now() + interval '1 hour', lease_expires_at = NULL`},
			{name: "live lease", set: `lease_expires_at = now() + interval '1 hour'`},
		} {
			t.Run(c.name, func(t *testing.T) {
				q := uniq("pop-wait")
				p := configure(t, st, q, c.opts)
				push(t, st, p, "1")
				if c.set != "" {
					push(t, st, partition(t, st, q, "other"), "x")
					exec(t, st, `INSERT INTO partition_consumers (partition_id, consumer_group) VALUES ($1, $2)`, p, g)
					exec(t, st, `UPDATE partition_consumers SET `+c.set+` WHERE partition_id = $1 AND consumer_group = $2`, p, g)
				}
				got, _ := pop(t, st, q, g, "Default", 10)
				require.Empty(t, got, "named partition")
				if c.set != "" {
					got = popWith(t, store.PopParams{Queue: q, MaxPartitions: 5, Batch: 10})
					require.Equal(t, []string{"x"}, txids(got), "wildcard skips the partition")
					return
				}
				got = popWith(t, store.PopParams{Queue: q, MaxPartitions: 5, Batch: 10})
				require.Empty(t, got, "wildcard")
				// Once the messages are old enough they are served.
				backdate(t, st, p, 2*time.Hour)
				exec(t, st, `UPDATE partitions SET last_push_at = last_push_at - interval '2 hours' WHERE id = $1`, p)
				exec(t, st, `UPDATE pending_partitions SET ready_at = now() WHERE partition_id = $1`, p)
				got = popWith(t, store.PopParams{Queue: q, MaxPartitions: 5, Batch: 10})
				require.Equal(t, []string{"1"}, txids(got))
			})
		}
	})

	t.Run("Pop/concurrent pops share nothing", func(t *testing.T) {
		// Pops racing for the same partitions: each partition goes to one of them under one lease.
		q := uniq("pop-race")
		const parts, pops = 3, 8
		for i := range parts {
			push(t, st, partition(t, st, q, fmt.Sprint("p", i)), "1", "2")
		}
		results := make([][]store.PoppedMessage, pops)
		var wg sync.WaitGroup
		for i := range pops {
			wg.Go(func() {
				got, err := st.Pop(ctx, store.PopParams{Queue: q, Group: g, MaxPartitions: 2, Batch: 10, LeaseID: uuid.Must(uuid.NewV7())})
				if err == nil {
					results[i] = got
				}
			})
		}
		wg.Wait()
		seen := map[string]int{}
		for _, r := range results {
			for _, m := range r {
				seen[m.Partition+"/"+m.TransactionID]++
			}
		}
		for k, n := range seen {
			require.Equal(t, 1, n, "%s delivered %d times", k, n)
		}
		// Whatever the race left unclaimed is claimable now; nothing is delivered twice.
		rest := popWith(t, store.PopParams{Queue: q, MaxPartitions: parts, Batch: 10})
		for _, m := range rest {
			seen[m.Partition+"/"+m.TransactionID]++
		}
		require.Len(t, seen, 2*parts)
		for k, n := range seen {
			require.Equal(t, 1, n, "%s delivered %d times", k, n)
		}
	})

	t.Run("Pop/redelivery of a retried dead letter", func(t *testing.T) {
		q := uniq("pop-redeliver")
		p := partition(t, st, q, "Default")
		push(t, st, p, "1", "2")
		got, _ := pop(t, st, q, g, "", 10)
		require.Len(t, got, 2)
		deadLetter(t, st, p, g, "1", "boom")
		ackDone(t, st, p, g, "1", "2")
		n, err := st.DeadLetters().RetryDeadLetters(ctx, p, "1", "")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		// Behind the cursor, but served again to the group it was dead-lettered for.
		got = popWith(t, store.PopParams{Queue: q, MaxPartitions: 1, Batch: 10, AutoAck: true})
		require.Equal(t, []string{"1"}, txids(got))
		require.Zero(t, scalar[int64](t, st, `SELECT count(*) FROM redeliveries WHERE partition_id = $1`, p), "autoAck settles it")
		// The partition's cursor was already at its end: the pop consumed it to the end, so its
		// pending-work record goes (no later pop claims it to drop it).
		require.Empty(t, pending(t, st, p))
		require.Empty(t, popWith(t, store.PopParams{Queue: q, MaxPartitions: 1, Batch: 10, AutoAck: true}))
	})
}
