package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// ackSide is one engine on its own database, acknowledging through the one-statement path or not.
type ackSide struct {
	t   *testing.T
	eng *engine.Engine
	db  *pgxpool.Pool // the side's database, for the tests' own reads and writes (the store's default schema)
}

func newAckSide(t *testing.T, fullOnly bool) *ackSide {
	t.Helper()
	ctx := t.Context()
	url := testenv.NewDatabase(t)
	st, err := store.Open(ctx, store.Options{URL: url})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	eng := engine.New(st, slog.New(slog.NewTextHandler(io.Discard, nil)), engine.Options{})
	if fullOnly {
		engine.DisableAckOne(eng)
	}
	eng.Start(ctx)
	t.Cleanup(eng.Stop)
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = "queenmq" // the store's default schema
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return &ackSide{t: t, eng: eng, db: db}
}

func (s *ackSide) push(queue, partition string, txids ...string) {
	s.t.Helper()
	items := make([]engine.PushItem, len(txids))
	for i, tx := range txids {
		items[i] = engine.PushItem{Queue: queue, Partition: partition, TransactionID: tx}
	}
	res, err := s.eng.Push(s.t.Context(), items)
	require.NoError(s.t, err)
	for _, r := range res {
		require.Equal(s.t, engine.StatusQueued, r.Status, r.Error)
	}
}

func (s *ackSide) pop(queue, partition, group string, batch int) *engine.PopResult {
	s.t.Helper()
	r, err := s.eng.Pop(s.t.Context(), engine.PopRequest{Queue: queue, Partition: partition, Group: group, Batch: batch})
	require.NoError(s.t, err)
	require.NotNil(s.t, r, "pop %s/%s %s", queue, partition, group)
	return r
}

func (s *ackSide) ack(items ...engine.AckItem) []engine.AckResult {
	s.t.Helper()
	res, err := s.eng.Ack(s.t.Context(), items)
	require.NoError(s.t, err)
	return res
}

func (s *ackSide) exec(sql string, args ...any) {
	s.t.Helper()
	_, err := s.db.Exec(s.t.Context(), sql, args...)
	require.NoError(s.t, err)
}

// state is what the acks of queue left in the database, by names (ids differ between the sides).
func (s *ackSide) state(queue string) string {
	s.t.Helper()
	st, err := s.readState(s.t.Context(), queue)
	require.NoError(s.t, err)
	return st
}

func (s *ackSide) readState(ctx context.Context, queue string) (string, error) {
	var b strings.Builder
	rows, err := s.db.Query(ctx, `
SELECT p.name, pc.consumer_group, pc.cursor_seq, pc.lease_expires_at IS NULL, pc.batch_retry_count, pc.total_consumed,
       pc.last_consumed_at IS NULL, pc.retry_after IS NULL,
       EXISTS (SELECT 1 FROM pending_partitions pp WHERE pp.partition_id = p.id AND pp.consumer_group = pc.consumer_group),
       (SELECT count(*) FROM dead_letters d WHERE d.partition_id = p.id AND d.consumer_group = pc.consumer_group)
FROM partition_consumers pc JOIN partitions p ON p.id = pc.partition_id JOIN queues q ON q.id = p.queue_id
WHERE q.name = $1 ORDER BY 1, 2`, queue)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var part, group string
		var cursor, consumed, dead int64
		var released, neverConsumed, noDelay, pending bool
		var retries int32
		if err := rows.Scan(&part, &group, &cursor, &released, &retries, &consumed, &neverConsumed, &noDelay, &pending, &dead); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s/%s cursor=%d leaseEnded=%t retries=%d consumed=%d neverConsumed=%t noDelay=%t pending=%t dead=%d\n",
			part, group, cursor, released, retries, consumed, neverConsumed, noDelay, pending, dead)
	}
	return b.String(), rows.Err()
}

// completed is the ack item of a delivered message, under lease ("" = not validated).
func completed(m engine.Message, lease string) engine.AckItem {
	pid, err := uuid.Parse(m.PartitionID)
	if err != nil {
		panic(err)
	}
	return engine.AckItem{TransactionID: m.TransactionID, PartitionID: pid, LeaseID: lease, Status: engine.AckCompleted, Group: m.ConsumerGroup}
}

// TestAckOneStatement: the common ack (completions of delivered messages, under their live lease or
// none, and repeated completions) is applied by the one-statement path, with the results and the
// database state the full path gives; a batch of whole leases this engine's pops handed out, by the
// whole-lease statement; every other batch is left to the full path, unchanged. Each case
// runs on two engines with their own databases, one with the one-statement path turned off; the last
// request of a case is the one whose path is checked (several requests are merged as the coalescer
// merges them).
func TestAckOneStatement(t *testing.T) {
	t.Parallel()
	fast, full := newAckSide(t, false), newAckSide(t, true)
	g := engine.QueueMode
	cases := []struct {
		name         string
		oneStatement bool
		wholeLeases  bool // of oneStatement: by the whole-lease statement (store.AckLeases)
		run          func(s *ackSide, q string) [][]engine.AckItem
	}{
		{"partial ack of a lease moves the cursor and keeps the lease", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b", "c", "d")
			r := s.pop(q, "p", g, 4)
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID)}}
		}},
		{"acking everything delivered ends the lease", true, true, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b", "c", "d", "e")
			r := s.pop(q, "p", g, 3)
			var items []engine.AckItem
			for _, m := range r.Messages {
				items = append(items, completed(m, r.LeaseID))
			}
			return [][]engine.AckItem{items}
		}},
		{"a cumulative ack of the last message ends the lease, earlier ones after it are noops", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b", "c")
			r := s.pop(q, "p", g, 3)
			return [][]engine.AckItem{{completed(r.Messages[2], r.LeaseID), completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], "")}}
		}},
		{"a repeated completion is a noop", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			s.ack(completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID))
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID), completed(r.Messages[1], "")}}
		}},
		{"a repeated completion under the lease before", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b", "c")
			r := s.pop(q, "p", g, 1)
			s.ack(completed(r.Messages[0], r.LeaseID))
			r2 := s.pop(q, "p", g, 1)
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r2.Messages[0], r2.LeaseID)}}
		}},
		{"success is a completion", true, true, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a")
			r := s.pop(q, "p", g, 1)
			it := completed(r.Messages[0], r.LeaseID)
			it.Status = engine.AckSuccess
			return [][]engine.AckItem{{it}}
		}},
		{"without a lease, after the lease expired: the cursor moves, no lease to end", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			s.exec(`UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second'
			        WHERE partition_id = $1::uuid`, r.Messages[0].PartitionID)
			return [][]engine.AckItem{{completed(r.Messages[1], "")}}
		}},
		{"two groups in one batch", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r1 := s.pop(q, "p", "g1", 2)
			r2 := s.pop(q, "p", "g2", 1)
			return [][]engine.AckItem{{completed(r1.Messages[1], r1.LeaseID), completed(r2.Messages[0], r2.LeaseID), completed(r1.Messages[0], r1.LeaseID)}}
		}},
		{"two partitions in one batch", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p1", "a", "b")
			s.push(q, "p2", "c", "d")
			r1 := s.pop(q, "p1", g, 2)
			r2 := s.pop(q, "p2", g, 2)
			return [][]engine.AckItem{{completed(r2.Messages[0], r2.LeaseID), completed(r1.Messages[0], r1.LeaseID),
				completed(r1.Messages[1], r1.LeaseID), completed(r2.Messages[1], "")}}
		}},
		{"merged requests of several consumers", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p1", "a", "b")
			s.push(q, "p2", "c")
			r1 := s.pop(q, "p1", "g1", 2)
			r2 := s.pop(q, "p2", "g1", 2)
			r3 := s.pop(q, "p1", "g2", 1)
			return [][]engine.AckItem{
				{completed(r1.Messages[0], r1.LeaseID), completed(r1.Messages[1], r1.LeaseID)},
				{completed(r2.Messages[0], r2.LeaseID)},
				{completed(r3.Messages[0], r3.LeaseID), completed(r1.Messages[0], r1.LeaseID)},
			}
		}},
		{"whole leases of several consumers, merged", true, true, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p1", "a", "b")
			s.push(q, "p2", "c", "d")
			var reqs [][]engine.AckItem
			for _, r := range []*engine.PopResult{s.pop(q, "p1", "g1", 2), s.pop(q, "p2", "g1", 2), s.pop(q, "p1", "g2", 2)} {
				var items []engine.AckItem
				for _, m := range r.Messages {
					items = append(items, completed(m, r.LeaseID))
				}
				reqs = append(reqs, items)
			}
			return reqs
		}},
		{"a whole lease merged with a partial ack of another lease: one statement, not the whole-lease one (Known issue 19)", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p1", "a", "b")
			s.push(q, "p2", "c")
			r1 := s.pop(q, "p1", g, 2)
			r2 := s.pop(q, "p2", g, 1)
			return [][]engine.AckItem{{completed(r1.Messages[0], r1.LeaseID)}, {completed(r2.Messages[0], r2.LeaseID)}}
		}},
		{"a whole lease merged with a failed ack: all of it takes the full path (Known issue 19)", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p1", "a")
			s.push(q, "p2", "c")
			r1 := s.pop(q, "p1", g, 1)
			r2 := s.pop(q, "p2", g, 1)
			failed := completed(r1.Messages[0], r1.LeaseID)
			failed.Status = engine.AckFailed
			return [][]engine.AckItem{{failed}, {completed(r2.Messages[0], r2.LeaseID)}}
		}},
		{"a whole lease that consumes its partition to the end drops the pending-work record", true, true, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID)}}
		}},
		{"a whole lease acked twice in one batch: the second time is repeated completions", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			items := []engine.AckItem{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID)}
			return [][]engine.AckItem{items, items}
		}},
		{"a whole lease partly acked before (without its id) is declined by the whole-lease statement", true, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			s.ack(completed(r.Messages[0], ""))
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID)}}
		}},
		{"a whole lease with a message deleted meanwhile goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			s.exec(`DELETE FROM messages WHERE partition_id = $1::uuid AND transaction_id = 'b'`, r.Messages[0].PartitionID)
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], r.LeaseID)}}
		}},
		{"a wrong lease goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(r.Messages[1], uuid.NewString())}}
		}},
		{"a repeated completion under another lease goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a")
			r := s.pop(q, "p", g, 1)
			s.ack(completed(r.Messages[0], r.LeaseID))
			return [][]engine.AckItem{{completed(r.Messages[0], uuid.NewString())}}
		}},
		{"an expired lease goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a")
			r := s.pop(q, "p", g, 1)
			s.exec(`UPDATE partition_consumers SET lease_expires_at = now() - interval '1 second'
			        WHERE partition_id = $1::uuid`, r.Messages[0].PartitionID)
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID)}}
		}},
		{"a lease id spelled in capitals goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a")
			r := s.pop(q, "p", g, 1)
			return [][]engine.AckItem{{completed(r.Messages[0], strings.ToUpper(r.LeaseID))}}
		}},
		{"an undelivered message goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b", "c")
			r := s.pop(q, "p", g, 1)
			undelivered := r.Messages[0]
			undelivered.TransactionID = "c"
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(undelivered, "")}}
		}},
		{"an unknown message goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a")
			r := s.pop(q, "p", g, 1)
			unknown := r.Messages[0]
			unknown.TransactionID = "nope"
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), completed(unknown, r.LeaseID)}}
		}},
		{"mixed statuses go to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 2)
			failed := completed(r.Messages[1], r.LeaseID)
			failed.Status = engine.AckFailed
			return [][]engine.AckItem{{completed(r.Messages[0], r.LeaseID), failed}}
		}},
		{"a message nobody popped goes to the full path (its consumer row is created there)", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a")
			r := s.pop(q, "p", "g1", 1)
			m := r.Messages[0]
			m.ConsumerGroup = "g2"
			return [][]engine.AckItem{{completed(m, "")}}
		}},
		{"a retried dead letter goes to the full path", false, false, func(s *ackSide, q string) [][]engine.AckItem {
			s.push(q, "p", "a", "b")
			r := s.pop(q, "p", g, 1)
			dlq := completed(r.Messages[0], r.LeaseID)
			dlq.Status = engine.AckDLQ
			s.ack(dlq)
			s.exec(`INSERT INTO redeliveries (partition_id, consumer_group, seq) VALUES ($1::uuid, $2, 1)`, r.Messages[0].PartitionID, g)
			r2 := s.pop(q, "p", g, 2)
			var items []engine.AckItem
			for _, m := range r2.Messages {
				items = append(items, completed(m, r2.LeaseID))
			}
			return [][]engine.AckItem{items}
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := fmt.Sprintf("ackone-%d", i)
			var results [2][][]engine.AckResult
			var states [2]string
			for j, s := range []*ackSide{fast, full} {
				s.t = t
				reqs := c.run(s, q)
				before, _ := engine.AckOneCounts(s.eng)
				leasesBefore := engine.AckLeaseCount(s.eng)
				var err error
				if len(reqs) == 1 {
					var r []engine.AckResult
					r, err = s.eng.Ack(t.Context(), reqs[0])
					results[j] = [][]engine.AckResult{r}
				} else {
					results[j], err = engine.AckMerged(t.Context(), s.eng, reqs)
				}
				require.NoError(t, err)
				after, _ := engine.AckOneCounts(s.eng)
				if j == 0 {
					require.Equal(t, c.oneStatement, after > before, "the one-statement path applied the batch")
					require.Equal(t, c.wholeLeases, engine.AckLeaseCount(s.eng) > leasesBefore, "the whole-lease statement applied the batch")
				} else {
					require.Equal(t, before, after, "the full side took the one-statement path")
				}
				states[j] = s.state(q)
			}
			require.Equal(t, results[1], results[0], "results: one-statement side vs full path")
			require.Equal(t, states[1], states[0], "database state: one-statement side vs full path")
			if c.oneStatement {
				for _, rs := range results[0] {
					for _, r := range rs {
						require.True(t, r.Success, "%+v", r)
					}
				}
			}
		})
	}
}
