package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// ConsumerKey identifies the cursor and lease of one consumer group on one partition.
type ConsumerKey struct {
	PartitionID uuid.UUID
	Group       string
}

// ConsumerState is a locked (partition, group) row as an ack sees it.
type ConsumerState struct {
	Cursor    int64
	LeaseID   *uuid.UUID
	LeaseLive bool
	// The current (or last) lease delivered the messages in (ClaimCursor, DeliveredSeq]; the lease before
	// it those in (PrevClaimCursor, PrevDeliveredSeq].
	ClaimCursor      int64
	DeliveredSeq     int64
	PrevLeaseID      *uuid.UUID
	PrevClaimCursor  int64
	PrevDeliveredSeq int64
	Retries          int32
	Redeliveries     int32 // retried dead letters delivered under the current lease and not yet acked
	LastSeq          int64 // the partition's last sequence number when the row was locked (it only grows)
}

// AckTarget addresses the message one ack item is about.
type AckTarget struct {
	ConsumerKey
	TransactionID string
}

// ResolvedMessage is what an AckTarget resolved to; Found is false when no such message is stored.
type ResolvedMessage struct {
	Found        bool
	Seq          int64
	Partition    string
	Queue        string
	RetryLimit   int32
	RetryDelayMs int32
	Redelivery   bool // a dead letter retried for this group, pending although behind the cursor
}

// ConsumerUpdate is the new state of a (partition, group) row after an ack batch.
type ConsumerUpdate struct {
	ConsumerKey
	Cursor   int64
	Release  bool  // end the lease (lease_id is kept to recognise repeated completions)
	Retries  int32 // batch retry count
	DelayMs  int32 // >0: the partition is not served again for this long
	Consumed int32 // messages completed, for the counters
}

// DeadLetter records a message moved to the dead-letter queue of a group.
type DeadLetter struct {
	ConsumerKey
	Seq     int64
	Error   string
	Retries int32
}

// AckEffects is what an ack batch changes.
type AckEffects struct {
	Updates     []ConsumerUpdate
	DeadLetters []DeadLetter
	Redelivered []Redelivered // retried dead letters now settled
}

// Redelivered names a retried dead letter that no longer needs serving.
type Redelivered struct {
	ConsumerKey
	Seq int64
}

// AckDecision computes the effects of an ack batch from the locked consumer rows and the resolved
// messages (in target order). It runs inside the transaction and must not block; an error aborts it.
type AckDecision func(states map[ConsumerKey]*ConsumerState, msgs []ResolvedMessage) (AckEffects, error)

// Ack locks every consumer row the targets touch (in key order, so concurrent batches cannot deadlock),
// resolves the messages, lets decide compute the outcome and applies it, all in one transaction.
//
// The transaction is opened and closed inside the two pipelined batches it needs anyway (read and
// lock, then write), so an ack costs two round-trips rather than four. It runs on the hot pool, whose
// sessions carry the plan settings; its commit waits for the WAL flush (the database's
// synchronous_commit).
func (s *Store) Ack(ctx context.Context, targets []AckTarget, decide AckDecision) error {
	c, err := s.acquireHot(ctx)
	if err != nil {
		return err
	}
	defer c.Release() // a connection left inside a transaction is discarded by the pool
	s.changed.note(len(targets), func(i int) uuid.UUID { return targets[i].PartitionID })
	if err := ackTx(ctx, c, targets, decide, true, s.now()); err != nil {
		if !c.Conn().IsClosed() {
			_, _ = c.Exec(context.WithoutCancel(ctx), q("Rollback"))
		}
		return fmt.Errorf("store: ack: %w", interpret(err))
	}
	return nil
}

// Ack applies acknowledgements inside the transaction; see [Store.Ack].
func (t *Tx) Ack(ctx context.Context, targets []AckTarget, decide AckDecision) error {
	t.changed.note(len(targets), func(i int) uuid.UUID { return targets[i].PartitionID })
	if err := ackTx(ctx, t.tx, targets, decide, false, t.s.now()); err != nil {
		return fmt.Errorf("store: ack: %w", interpret(err))
	}
	return nil
}

// ackTx runs the ack statements on db; with own it opens and commits the transaction itself, inside
// its batches (db is then a connection of the hot pool). Without own they run in the caller's
// transaction, on the general pool, with the session defaults.
func ackTx(ctx context.Context, db batcher, targets []AckTarget, decide AckDecision, own bool, now pgtype.Timestamptz) error {
	pids := make([]uuid.UUID, len(targets))
	groups := make([]string, len(targets))
	txids := make([]string, len(targets))
	for i, t := range targets {
		pids[i], groups[i], txids[i] = t.PartitionID, t.Group, t.TransactionID
	}
	{
		states := make(map[ConsumerKey]*ConsumerState)
		msgs := make([]ResolvedMessage, len(targets))
		b := &pgx.Batch{}
		if own {
			b.Queue(q("Begin"))
		}
		lock := func(rs pgx.Rows) error {
			return eachRow(rs, func(rs pgx.Rows) error {
				var k ConsumerKey
				st := &ConsumerState{}
				if err := rs.Scan(&k.PartitionID, &k.Group, &st.Cursor, &st.LeaseID, &st.LeaseLive, &st.ClaimCursor, &st.DeliveredSeq,
					&st.PrevLeaseID, &st.PrevClaimCursor, &st.PrevDeliveredSeq, &st.Retries, &st.Redeliveries, &st.LastSeq); err != nil {
					return err
				}
				states[k] = st
				return nil
			})
		}
		b.Queue(q("ConsumerLock"), pids, groups, now).Query(lock)
		b.Queue(q("AckResolve"), pids, txids, groups).Query(func(rs pgx.Rows) error {
			return eachRow(rs, func(rs pgx.Rows) error {
				var i int64
				var m ResolvedMessage
				if err := rs.Scan(&i, &m.Seq, &m.Partition, &m.Queue, &m.RetryLimit, &m.RetryDelayMs, &m.Redelivery); err != nil {
					return err
				}
				m.Found = true
				msgs[i-1] = m
				return nil
			})
		})
		if err := db.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		// Consumer rows exist once a partition was popped; an ack of a message nobody popped (queue
		// mode without a lease) creates them, at the cost of one more round-trip.
		for i, t := range targets {
			if _, ok := states[t.ConsumerKey]; !ok && msgs[i].Found {
				b = &pgx.Batch{}
				b.Queue(q("ConsumerEnsure"), pids, groups)
				b.Queue(q("ConsumerLock"), pids, groups, now).Query(lock)
				if err := db.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
				break
			}
		}
		eff, err := decide(states, msgs)
		if err != nil {
			return err
		}
		updates, dead := eff.Updates, eff.DeadLetters
		b = &pgx.Batch{}
		if len(updates) > 0 {
			n := len(updates)
			up := make([]uuid.UUID, n)
			ug := make([]string, n)
			cur := make([]int64, n)
			rel := make([]bool, n)
			ret := make([]int32, n)
			delay := make([]int32, n)
			cons := make([]int32, n)
			for i, u := range updates {
				up[i], ug[i], cur[i], rel[i], ret[i], delay[i], cons[i] = u.PartitionID, u.Group, u.Cursor, u.Release, u.Retries, u.DelayMs, u.Consumed
			}
			b.Queue(q("AckApply"), up, ug, cur, rel, ret, delay, cons, now)
		}
		if len(dead) > 0 {
			n := len(dead)
			dp := make([]uuid.UUID, n)
			ds := make([]int64, n)
			dg := make([]string, n)
			de := make([]string, n)
			dr := make([]int32, n)
			for i, d := range dead {
				dp[i], ds[i], dg[i], de[i], dr[i] = d.PartitionID, d.Seq, d.Group, d.Error, d.Retries
			}
			b.Queue(q("DeadLetterInsert"), dp, ds, dg, de, dr, now)
		}
		if n := len(eff.Redelivered); n > 0 {
			rp := make([]uuid.UUID, n)
			rg := make([]string, n)
			rs := make([]int64, n)
			for i, r := range eff.Redelivered {
				rp[i], rg[i], rs[i] = r.PartitionID, r.Group, r.Seq
			}
			b.Queue(q("RedeliveryDelete"), rp, rg, rs)
		}
		// Only cursors that reached what the partition held when it was locked can have consumed it to
		// its end (last_seq only grows): a consumer behind the producers skips the statement.
		var fp []uuid.UUID
		var fg []string
		var fc []int64
		for _, u := range updates {
			if st, ok := states[u.ConsumerKey]; ok && u.Cursor < st.LastSeq {
				continue
			}
			fp, fg, fc = append(fp, u.PartitionID), append(fg, u.Group), append(fc, u.Cursor)
		}
		if len(fp) > 0 {
			// After the redeliveries are settled, so that settling the last one counts.
			b.Queue(q("PendingForgetConsumed"), fp, fg, fc)
		}
		if own {
			b.Queue(q("Commit"))
		}
		if b.Len() == 0 {
			return nil
		}
		return db.SendBatch(ctx, b).Close()
	}
}

// AckCompletion is one item of an ack batch made only of completions.
type AckCompletion struct {
	AckTarget
	LeaseID *uuid.UUID // nil: the lease is not validated
}

// CompletedAck is what AckCompletions did with one item: the message it named, whether the item was a
// repeated completion (Noop) and whether it ended the lease.
type CompletedAck struct {
	Seq       int64
	Partition string
	Queue     string
	Noop      bool
	Released  bool
}

// AckCompletions applies a batch of completions in one statement and one round-trip, autocommitted
// (its commit waits for the WAL flush, like Ack's): the cursors move, leases whose deliveries are all
// acknowledged end, and pending-work records of partitions consumed to their end are dropped, exactly as
// Ack with the engine's decision would. It does so only when every item is a completion that decision
// would accept without a retried dead letter being involved (queries/ack.sql AckCompletions); otherwise
// it changes nothing and answers applied=false, and the caller runs Ack. Results are in item order.
func (s *Store) AckCompletions(ctx context.Context, items []AckCompletion) (_ []CompletedAck, applied bool, err error) {
	n := len(items)
	pids := make([]uuid.UUID, n)
	groups := make([]string, n)
	txids := make([]string, n)
	leases := make([]*uuid.UUID, n)
	for i, it := range items {
		pids[i], groups[i], txids[i], leases[i] = it.PartitionID, it.Group, it.TransactionID, it.LeaseID
	}
	c, err := s.acquireHot(ctx)
	if err != nil {
		return nil, false, err
	}
	defer c.Release()
	s.changed.note(n, func(i int) uuid.UUID { return pids[i] })
	rows, err := c.Query(ctx, q("AckCompletions"), pids, groups, txids, leases, s.now())
	if err != nil {
		return nil, false, fmt.Errorf("store: ack completions: %w", interpret(err))
	}
	out := make([]CompletedAck, n)
	seen := 0
	err = eachRow(rows, func(rows pgx.Rows) error {
		var i int64
		var r CompletedAck
		if err := rows.Scan(&i, &r.Seq, &r.Partition, &r.Queue, &r.Noop, &r.Released); err != nil {
			return err
		}
		if i < 1 || int(i) > n {
			return fmt.Errorf("item %d of %d", i, n)
		}
		out[i-1] = r
		seen++
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: ack completions: %w", interpret(err))
	}
	switch seen {
	case 0:
		return nil, false, nil
	case n:
		return out, true, nil
	}
	return nil, false, fmt.Errorf("store: ack completions: %d rows for %d items", seen, n)
}

// LeaseAck says that every message a lease delivered to one consumer row was completed, in the order
// delivered: Count is how many the pop returned.
type LeaseAck struct {
	ConsumerKey
	LeaseID uuid.UUID
	Count   int32
}

// AckLeases completes whole leases in one statement and one round-trip, autocommitted (its commit
// waits for the WAL flush): each cursor moves to its claim's last message, the lease ends, and the
// pending-work record of a partition consumed to its end is dropped, as AckCompletions would do for
// the same items. It looks no message up by transaction id: it applies the batch only when every lease
// is still the one its consumer row holds, unexpired and not yet partly acked, with Count messages
// delivered and still stored and no retried dead letter involved (queries/ack.sql AckLeases); otherwise
// it changes nothing and answers false.
func (s *Store) AckLeases(ctx context.Context, leases []LeaseAck) (applied bool, err error) {
	n := len(leases)
	pids := make([]uuid.UUID, n)
	groups := make([]string, n)
	ids := make([]uuid.UUID, n)
	counts := make([]int32, n)
	for i, l := range leases {
		pids[i], groups[i], ids[i], counts[i] = l.PartitionID, l.Group, l.LeaseID, l.Count
	}
	c, err := s.acquireHot(ctx)
	if err != nil {
		return false, err
	}
	defer c.Release()
	s.changed.note(len(pids), func(i int) uuid.UUID { return pids[i] })
	if err := c.QueryRow(ctx, q("AckLeases"), pids, groups, ids, counts, s.now()).Scan(&applied); err != nil {
		return false, fmt.Errorf("store: ack leases: %w", interpret(err))
	}
	return applied, nil
}
