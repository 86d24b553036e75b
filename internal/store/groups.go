package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Subscription modes as recorded.
const (
	SubscribeAll       = "all"
	SubscribeNew       = "new"
	SubscribeTimestamp = "timestamp"
)

// EnsureSubscription records group's subscription on queue unless one exists; mode is SubscribeAll,
// SubscribeNew or SubscribeTimestamp (with ts). It reports whether the queue exists; once it did, with
// no error, the subscription is recorded and seeded.
//
// The subscription is recorded and committed first, then seeded a chunk of partitions per transaction
// (queries/groups.sql, SubscriptionRecord, SubscriptionSeedChunk, SubscriptionSeeded), so that a push
// waits for one chunk at most, whatever the mode. A seed cut short is taken up by the next call, from
// any broker, where it stopped, so the caller may remember the subscription only after a nil error.
// The first subscription wins, whatever mode later pops ask for. Two first pops of one group on two
// brokers may both seed; the seed is idempotent.
func (g Groups) EnsureSubscription(ctx context.Context, queue, group, mode string, ts time.Time) (bool, error) {
	s := g.s
	at := pgtype.Timestamptz{Time: ts, Valid: mode == SubscribeTimestamp}
	var qid uuid.UUID
	var unseeded bool
	var after *string // where a seed cut short stopped
	err := s.pool.QueryRow(ctx, q("SubscriptionRecord"), queue, group, QueueMode, mode, at, s.now()).Scan(&qid, &unseeded, &after)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil || !unseeded {
		return err == nil, wrapSubscription(queue, group, err)
	}
	// A group's cursors are part of every partition's counts (the slowest position); a default-mode
	// group is before every partition's first message.
	defer s.changed.noteQueue(queue, false)
	chunk := s.seedChunk
	if chunk <= 0 {
		chunk = defaultSeedChunk
	}
	for {
		var last *string
		if err := s.pool.QueryRow(ctx, q("SubscriptionSeedChunk"), qid, group, after, chunk, s.now()).Scan(&last); err != nil {
			return false, wrapSubscription(queue, group, err)
		}
		if last == nil {
			break
		}
		after = last
	}
	_, err = s.pool.Exec(ctx, q("SubscriptionSeeded"), qid, group)
	return err == nil, wrapSubscription(queue, group, err)
}

// defaultSeedChunk is how many partitions one transaction of a subscription's seed takes: a push to
// one of them waits for that transaction at most.
const defaultSeedChunk = 1000

func wrapSubscription(queue, group string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: subscription %q on %q: %w", group, queue, interpret(err))
}

// GroupSummary is one (group, queue) pair of the consumer-group listing. Lag counts the messages
// after the group's position on every partition of the queue (processing included); DeadLetter and
// DLQConsumed are the group's dead letters and those of them at or before its position.
type GroupSummary struct {
	Group, Queue            string
	QueueMode               bool
	Members                 int64
	Partitions              int64
	Behind                  int64
	Lag, Processing, Total  int64
	DeadLetter, DLQConsumed int64
	MaxLagSeconds           float64
	Consumed                int64
	Mode                    *string
	SubscriptionTS          *time.Time
	SubscribedAt            *time.Time
}

// ListConsumerGroups lists every (group, queue) pair: the groups of every queue (migration 0021,
// queue_groups).
func (g Groups) ListConsumerGroups(ctx context.Context) ([]GroupSummary, error) {
	s := g.s
	return collectViews(ctx, s, "ConsumerGroupList", func(r pgx.Rows) (g GroupSummary, err error) {
		err = r.Scan(&g.Group, &g.Queue, &g.QueueMode, &g.Members, &g.Partitions, &g.Behind, &g.Lag, &g.Processing, &g.Total,
			&g.DeadLetter, &g.DLQConsumed, &g.MaxLagSeconds, &g.Consumed, &g.Mode, &g.SubscriptionTS, &g.SubscribedAt)
		return g, err
	}, s.now())
}

// GroupPartition is one cursor of a group.
type GroupPartition struct {
	Queue, Partition string
	PartitionID      uuid.UUID
	LeaseID          *uuid.UUID
	LastConsumedAt   *time.Time
	TotalConsumed    int64
	OffsetLag        int64
	TimeLagSeconds   float64
	LeaseActive      bool
	HasCursor        bool
}

// GroupPartitions lists every partition of the queues group belongs to, with its position there.
func (g Groups) GroupPartitions(ctx context.Context, group string) ([]GroupPartition, error) {
	s := g.s
	return collectViews(ctx, s, "ConsumerGroupPartitions", func(r pgx.Rows) (g GroupPartition, err error) {
		err = r.Scan(&g.Queue, &g.Partition, &g.PartitionID, &g.LeaseID, &g.LastConsumedAt, &g.TotalConsumed, &g.OffsetLag, &g.TimeLagSeconds, &g.LeaseActive, &g.HasCursor)
		return g, err
	}, group, s.now())
}

// LaggingPartition is a cursor whose oldest unconsumed message is older than a threshold.
type LaggingPartition struct {
	Group, Queue, Partition string
	PartitionID             uuid.UUID
	LeaseID                 *uuid.UUID
	OffsetLag               int64
	TimeLagSeconds          float64
	OldestUnconsumedAt      time.Time
	LastConsumedAt          *time.Time
	HasCursor               bool
}

// LaggingPartitions lists the (group, partition) pairs lagging more than minLag, worst first, never-read
// partitions included.
func (g Groups) LaggingPartitions(ctx context.Context, minLag time.Duration) ([]LaggingPartition, error) {
	s := g.s
	return collectViews(ctx, s, "PartitionListLagging", func(r pgx.Rows) (g LaggingPartition, err error) {
		err = r.Scan(&g.Group, &g.Queue, &g.Partition, &g.PartitionID, &g.LeaseID, &g.OffsetLag, &g.TimeLagSeconds, &g.OldestUnconsumedAt, &g.LastConsumedAt, &g.HasCursor)
		return g, err
	}, minLag.Seconds(), s.now())
}

// DeleteGroup removes group's cursors on queue (every queue when queue is ""). Without deleteMetadata
// the cursors restart at the recorded subscription point; with it, the next pop subscribes anew.
func (g Groups) DeleteGroup(ctx context.Context, group, queue string, deleteMetadata bool) (cursors, metadata int64, err error) {
	s := g.s
	defer s.changed.noteQueue(queue, queue == "")
	qn := nullText(queue)
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, q("ConsumerGroupDeleteCursors"), group, qn, deleteMetadata).Scan(&cursors, &metadata); err != nil {
			return err
		}
		if !deleteMetadata {
			if _, err := tx.Exec(ctx, q("ConsumerGroupReseed"), group, qn, s.now()); err != nil {
				return err
			}
		}
		return s.refreshPending(ctx, tx, group, qn)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: delete group %q: %w", group, interpret(err))
	}
	return cursors, metadata, nil
}

// UpdateSubscription moves group's subscription point on every queue to ts; cursors that have not
// consumed anything yet move with it.
func (g Groups) UpdateSubscription(ctx context.Context, group string, ts time.Time) (int64, error) {
	s := g.s
	defer s.changed.noteQueue("", true)
	var n int64
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, q("SubscriptionUpdate"), group, ts).Scan(&n); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, q("ConsumerGroupReseed"), group, pgtype.Text{}, s.now()); err != nil {
			return err
		}
		return s.refreshPending(ctx, tx, group, pgtype.Text{})
	})
	if err != nil {
		return 0, fmt.Errorf("store: update subscription %q: %w", group, interpret(err))
	}
	return n, nil
}

// SeekQueue places group's position on every partition of queue, read by it or not, at the end or
// after the last message at or before ts, and returns the number of partitions; ErrNotFound when there
// is no such queue. A named group seeking a queue it is not subscribed to subscribes (seekSubscribe).
func (g Groups) SeekQueue(ctx context.Context, group, queue string, toEnd bool, ts time.Time) (int64, error) {
	s := g.s
	defer s.changed.noteQueue(queue, false)
	var n, moved int64 // moved: positions written; n: every partition of the queue
	var exists bool
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		if _, err := seekSubscribe(ctx, tx, group, queue); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, q("ConsumerGroupSeekQueue"), group, queue, toEnd, pgtype.Timestamptz{Time: ts, Valid: !toEnd}).Scan(&n, &exists, &moved); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		return s.refreshPending(ctx, tx, group, pgtype.Text{String: queue, Valid: true})
	})
	if errors.Is(err, ErrNotFound) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("store: seek %q on %q: %w", group, queue, interpret(err))
	}
	return n, nil
}

// seekSubscribe records a named group's subscription on queue, unless it has one, when it seeks
// there: the groups of a queue are its subscribed groups (migration 0021, queue_groups), and a group
// that placed positions on a queue is one of them. The queue row is locked first as for a pop's
// subscription (queries/groups.sql, SubscriptionLock). Reports whether it recorded one.
func seekSubscribe(ctx context.Context, tx pgx.Tx, group, queue string) (bool, error) {
	if _, err := tx.Exec(ctx, q("SubscriptionLock"), queue, group, QueueMode); err != nil {
		return false, err
	}
	var recorded bool
	err := tx.QueryRow(ctx, q("SubscriptionRecordSeeked"), queue, group, QueueMode).Scan(&recorded)
	return recorded, err
}

// SeekPartition moves group's cursor on one partition to its end; ErrNotFound when there is no
// such partition.
func (g Groups) SeekPartition(ctx context.Context, group, queue, partition string) (int64, error) {
	s := g.s
	defer s.changed.noteQueue(queue, false)
	var seq pgtype.Int8
	err := s.withTx(ctx, func(tx pgx.Tx) error {
		recorded, err := seekSubscribe(ctx, tx, group, queue)
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, q("ConsumerGroupSeekPartition"), group, queue, partition).Scan(&seq, &exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		if !recorded {
			return nil
		}
		return s.refreshPending(ctx, tx, group, pgtype.Text{String: queue, Valid: true})
	})
	if errors.Is(err, ErrNotFound) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("store: seek %q on %s/%s: %w", group, queue, partition, interpret(err))
	}
	return seq.Int64, nil
}

// refreshPending rebuilds group's pending-work records on queue (every queue when invalid) after its
// cursors moved other than by consuming (queries/pending.sql).
func (s *Store) refreshPending(ctx context.Context, tx pgx.Tx, group string, queue pgtype.Text) error {
	_, err := tx.Exec(ctx, q("PendingRefresh"), group, queue, QueueMode, s.now())
	return err
}
