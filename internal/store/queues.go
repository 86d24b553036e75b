package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// QueueOptions is the full configuration of a queue (configure replaces all of it).
type QueueOptions struct {
	Namespace, Task           string
	Priority                  int32
	LeaseTime                 int32
	RetryLimit                int32
	RetryDelay                int32
	MaxSize                   int32
	TTL                       int32
	DeadLetterQueue           bool
	DLQAfterMaxRetries        bool
	DelayedProcessing         int32
	WindowBuffer              int32
	RetentionSeconds          int32
	CompletedRetentionSeconds int32
	RetentionEnabled          bool
	EncryptionEnabled         bool
	MaxWaitTimeSeconds        int32
}

// ConfigureQueue creates or fully reconfigures a queue and makes sure its Default partition exists.
func (qs Queues) ConfigureQueue(ctx context.Context, name string, o QueueOptions) (queueID, defaultPartition uuid.UUID, err error) {
	s := qs.s
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, q("QueueConfigure"), name, o.Namespace, o.Task, o.Priority, o.LeaseTime, o.RetryLimit,
			o.RetryDelay, o.MaxSize, o.TTL, o.DeadLetterQueue, o.DLQAfterMaxRetries, o.DelayedProcessing, o.WindowBuffer,
			o.RetentionSeconds, o.CompletedRetentionSeconds, o.RetentionEnabled, o.EncryptionEnabled,
			o.MaxWaitTimeSeconds).Scan(&queueID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, q("PartitionEnsureDefault"), queueID).Scan(&defaultPartition)
	})
	if err != nil {
		return uuid.Nil, uuid.Nil, fmt.Errorf("store: configure %q: %w", name, interpret(err))
	}
	s.changed.notePartition(defaultPartition) // so that the queue has counts (zeros) after the next pass
	return queueID, defaultPartition, nil
}

// QueueSummary is one queue of the listings, with its rolled-up counts (see [Store.RefreshQueueStats]).
type QueueSummary struct {
	ID                         uuid.UUID
	Name, Namespace, Task      string
	Priority                   int32
	CreatedAt                  time.Time
	Partitions                 int64
	Total, Pending, Processing int64
	Completed, DeadLetter      int64
	OldestPendingAt, StatsAt   *time.Time
	TotalConsumed              int64
}

// ListQueuesParams filters [Store.ListQueues]; empty strings match everything.
type ListQueuesParams struct {
	Namespace, Task string
	Limit, Offset   int
}

// ListQueues lists queues newest first with their rolled-up counts.
func (qs Queues) ListQueues(ctx context.Context, p ListQueuesParams) ([]QueueSummary, error) {
	s := qs.s
	return collect(ctx, s, "QueueList", func(r pgx.Rows) (x QueueSummary, err error) {
		err = r.Scan(&x.ID, &x.Name, &x.Namespace, &x.Task, &x.Priority, &x.CreatedAt, &x.Partitions, &x.Total,
			&x.Pending, &x.Processing, &x.Completed, &x.DeadLetter, &x.OldestPendingAt, &x.StatsAt, &x.TotalConsumed)
		return x, err
	}, nullText(p.Namespace), nullText(p.Task), p.Limit, p.Offset)
}

// QueueInfo is a queue's identity and its whole configuration, as configure stores it.
type QueueInfo struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time
	QueueOptions
}

// QueueByName reads one queue; ErrNotFound when it does not exist.
func (qs Queues) QueueByName(ctx context.Context, name string) (*QueueInfo, error) {
	s := qs.s
	var x QueueInfo
	err := s.pool.QueryRow(ctx, q("QueueGetByName"), name).Scan(&x.ID, &x.Name, &x.Namespace, &x.Task, &x.Priority,
		&x.CreatedAt, &x.LeaseTime, &x.RetryLimit, &x.RetryDelay, &x.TTL, &x.MaxSize, &x.DeadLetterQueue,
		&x.RetentionEnabled, &x.RetentionSeconds, &x.CompletedRetentionSeconds, &x.EncryptionEnabled,
		&x.DLQAfterMaxRetries, &x.DelayedProcessing, &x.WindowBuffer, &x.MaxWaitTimeSeconds)
	if err != nil {
		return nil, fmt.Errorf("store: queue %q: %w", name, interpret(err))
	}
	return &x, nil
}

// PartitionCounts are the exact counts of one partition.
type PartitionCounts struct {
	ID                      uuid.UUID
	Name                    string
	CreatedAt               time.Time
	LastPushAt              *time.Time
	Total, Consumed         int64
	Processing              int64
	DeadLetter, DLQConsumed int64
	Oldest, Newest          *time.Time
	OldestPending           *time.Time
	TotalConsumed           int64
	LastConsumedAt          *time.Time
}

// PartitionCounts counts the messages of each partition of a queue exactly.
func (qs Queues) PartitionCounts(ctx context.Context, queueID uuid.UUID) ([]PartitionCounts, error) {
	s := qs.s
	return collectViews(ctx, s, "PartitionCounts", func(r pgx.Rows) (x PartitionCounts, err error) {
		err = r.Scan(&x.ID, &x.Name, &x.CreatedAt, &x.LastPushAt, &x.Total, &x.Consumed, &x.Processing, &x.DeadLetter,
			&x.DLQConsumed, &x.Oldest, &x.Newest, &x.OldestPending, &x.TotalConsumed, &x.LastConsumedAt)
		return x, err
	}, queueID)
}

// PartitionGroupCounts are one partition's exact counts for one group of its queue (migration 0021,
// queue_groups); Cursor is nil where the group never read the partition.
type PartitionGroupCounts struct {
	PartitionID             uuid.UUID
	Group                   string
	QueueMode               bool
	Cursor                  *int64
	Total, Unconsumed       int64
	Processing              int64
	LagSeconds              float64 // the age of the first unconsumed message, 0 for none
	DeadLetter, DLQConsumed int64
}

// PartitionGroupCounts counts each partition of a queue for each of its groups, exactly, in partition
// name order (queue mode first within a partition).
func (qs Queues) PartitionGroupCounts(ctx context.Context, queueID uuid.UUID) ([]PartitionGroupCounts, error) {
	s := qs.s
	return collectViews(ctx, s, "PartitionGroupCounts", func(r pgx.Rows) (x PartitionGroupCounts, err error) {
		err = r.Scan(&x.PartitionID, &x.Group, &x.QueueMode, &x.Cursor, &x.Total, &x.Unconsumed, &x.Processing,
			&x.LagSeconds, &x.DeadLetter, &x.DLQConsumed)
		return x, err
	}, queueID, s.now())
}

// QueueGroups names the consumer groups of a queue (docs/decisions.md "Groups of a queue").
func (qs Queues) QueueGroups(ctx context.Context, queue string) ([]string, error) {
	s := qs.s
	return collect(ctx, s, "QueueGroupList", scanOne[string], queue)
}

// QueueEncrypted reports whether a queue stores its payloads encrypted; ErrNotFound for no queue.
func (s *Store) QueueEncrypted(ctx context.Context, queue string) (bool, error) {
	var b bool
	if err := s.pool.QueryRow(ctx, q("QueueEncrypted"), queue).Scan(&b); err != nil {
		return false, fmt.Errorf("store: queue %q encryption: %w", queue, interpret(err))
	}
	return b, nil
}

// AnyEncryptedQueue reports whether some queue has encryption enabled.
func (s *Store) AnyEncryptedQueue(ctx context.Context) (bool, error) {
	var b bool
	if err := s.pool.QueryRow(ctx, q("QueueAnyEncrypted")).Scan(&b); err != nil {
		return false, fmt.Errorf("store: encrypted queues: %w", interpret(err))
	}
	return b, nil
}

// DeleteQueue removes a queue with its partitions, messages, cursors and dead letters; false when
// there was no such queue.
func (qs Queues) DeleteQueue(ctx context.Context, name string) (bool, error) {
	s := qs.s
	n, err := s.countQuery(ctx, "QueueDelete", name)
	return n > 0, err
}

// QueuesByNamespaceTask lists the queues matching namespace and/or task ("" matches any), highest
// priority first.
func (qs Queues) QueuesByNamespaceTask(ctx context.Context, namespace, task string) ([]string, error) {
	s := qs.s
	return collect(ctx, s, "QueueListByNamespaceTask", scanOne[string], nullText(namespace), nullText(task))
}

// Backlog is a queue's capacity and how many messages it holds unconsumed.
type Backlog struct {
	MaxSize int64
	Pending int64
}

// QueueBacklogs reports the backlog of those of queues that have a maxSize.
func (s *Store) QueueBacklogs(ctx context.Context, queues []string) (map[string]Backlog, error) {
	return collectMap(ctx, s, "QueueBacklog", func(r pgx.Rows) (name string, b Backlog, err error) {
		var max int32
		err = r.Scan(&name, &max, &b.Pending)
		b.MaxSize = int64(max)
		return name, b, err
	}, queues)
}

// QueueLimits returns the maxSize of each named queue that exists.
func (s *Store) QueueLimits(ctx context.Context, queues []string) (map[string]int32, error) {
	return collectMap(ctx, s, "QueueLimits", func(r pgx.Rows) (name string, max int32, err error) {
		err = r.Scan(&name, &max)
		return name, max, err
	}, queues)
}
