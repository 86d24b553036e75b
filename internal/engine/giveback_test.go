package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
)

// TestPopGivesBackWhenTheConsumerLeft: a consumer's request ends while its pop's claim runs (the
// claim cannot be interrupted once sent). Nobody will read the answer, so the lease is given back:
// the next pop gets the same messages at once, not after leaseTime, and not as a retry. In queue mode
// and for a consumer group whose pop claimed two partitions under one lease.
func TestPopGivesBackWhenTheConsumerLeft(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, group string
		partitions  int
	}{{"queue mode", "", 1}, {"group, two partitions", "g", 2}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := newAckSide(t, false)
			s.push("q", "p1", "a", "b")
			if c.partitions > 1 {
				s.push("q", "p2", "c")
			}
			req := engine.PopRequest{Queue: "q", Group: c.group, Batch: 10, Partitions: c.partitions}
			// The group's subscription is recorded first, by a pop of a partition that does not exist.
			none, err := s.eng.Pop(ctx, engine.PopRequest{Queue: "q", Partition: "none", Group: c.group})
			require.NoError(t, err)
			require.Nil(t, none)

			// Hold the pop statement: planning it needs a lock on every table it reads.
			lock, err := s.db.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = lock.Rollback(context.WithoutCancel(ctx)) }()
			_, err = lock.Exec(ctx, `LOCK TABLE redeliveries IN ACCESS EXCLUSIVE MODE`)
			require.NoError(t, err)

			consumer, leave := context.WithCancel(ctx)
			type answer struct {
				res *engine.PopResult
				err error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := s.eng.Pop(consumer, req)
				done <- answer{res, err}
			}()
			require.Eventually(t, func() bool {
				var waiting bool
				require.NoError(t, s.db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH RECURSIVE q AS%')`).Scan(&waiting))
				return waiting
			}, 10*time.Second, 5*time.Millisecond, "the pop statement never waited on the lock")
			leave()
			require.NoError(t, lock.Rollback(ctx))
			got := <-done
			require.NoError(t, got.err)
			require.Nil(t, got.res, "the answer of a consumer that left")

			again, err := s.eng.Pop(ctx, req)
			require.NoError(t, err)
			require.NotNil(t, again, "the claim was not given back: the partitions stay leased until leaseTime")
			var txids []string
			for _, m := range again.Messages {
				txids = append(txids, m.TransactionID)
				require.Zero(t, m.RetryCount)
			}
			want := []string{"a", "b", "c"}[:2+c.partitions-1]
			require.ElementsMatch(t, want, txids)
			require.Equal(t, c.partitions, again.PartitionsClaimed)
		})
	}
}
