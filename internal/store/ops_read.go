package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// QueueSummary is one queue of the listings, with its rolled-up counts (see [Store.RefreshQueueStats]).
type QueueSummary struct {
	ID                         uuid.UUID
	Name, Namespace, Task      string
	Priority                   int32
	CreatedAt                  time.Time
	Partitions                 int64
	Total, Pending, Processing int64
	Completed, DeadLetter      int64
	OldestPendingAt, StatsAt   pgtype.Timestamptz
	TotalConsumed              int64
}

// ListQueuesParams filters [Store.ListQueues]; empty strings match everything.
type ListQueuesParams struct {
	Namespace, Task string
	Limit, Offset   int
}

func nullText(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

// ListQueues lists queues newest first with their rolled-up counts.
func (s *Store) ListQueues(ctx context.Context, p ListQueuesParams) ([]QueueSummary, error) {
	rows, err := s.pool.Query(ctx, q("OpsListQueues"), nullText(p.Namespace), nullText(p.Task), p.Limit, p.Offset)
	if err != nil {
		return nil, fmt.Errorf("store: list queues: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (QueueSummary, error) {
		var x QueueSummary
		err := r.Scan(&x.ID, &x.Name, &x.Namespace, &x.Task, &x.Priority, &x.CreatedAt, &x.Partitions, &x.Total,
			&x.Pending, &x.Processing, &x.Completed, &x.DeadLetter, &x.OldestPendingAt, &x.StatsAt, &x.TotalConsumed)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list queues: %w", interpret(err))
	}
	return out, nil
}

// QueueInfo is a queue's identity and configuration.
type QueueInfo struct {
	ID                        uuid.UUID
	Name, Namespace, Task     string
	Priority                  int32
	CreatedAt                 time.Time
	LeaseTime, RetryLimit     int32
	RetryDelay, TTL, MaxSize  int32
	DeadLetterQueue           bool
	RetentionEnabled          bool
	RetentionSeconds          int32
	CompletedRetentionSeconds int32
	EncryptionEnabled         bool
}

// QueueByName reads one queue; ErrNotFound when it does not exist.
func (s *Store) QueueByName(ctx context.Context, name string) (*QueueInfo, error) {
	var x QueueInfo
	err := s.pool.QueryRow(ctx, q("OpsQueueByName"), name).Scan(&x.ID, &x.Name, &x.Namespace, &x.Task, &x.Priority,
		&x.CreatedAt, &x.LeaseTime, &x.RetryLimit, &x.RetryDelay, &x.TTL, &x.MaxSize, &x.DeadLetterQueue,
		&x.RetentionEnabled, &x.RetentionSeconds, &x.CompletedRetentionSeconds, &x.EncryptionEnabled)
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
	LastPushAt              pgtype.Timestamptz
	Total, Consumed         int64
	Processing              int64
	DeadLetter, DLQConsumed int64
	Oldest, Newest          pgtype.Timestamptz
	OldestPending           pgtype.Timestamptz
	TotalConsumed           int64
	LastConsumedAt          pgtype.Timestamptz
}

// PartitionCounts counts the messages of each partition of a queue exactly.
func (s *Store) PartitionCounts(ctx context.Context, queueID uuid.UUID) ([]PartitionCounts, error) {
	rows, err := s.pool.Query(ctx, q("OpsPartitionCounts"), queueID)
	if err != nil {
		return nil, fmt.Errorf("store: partition counts: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PartitionCounts, error) {
		var x PartitionCounts
		err := r.Scan(&x.ID, &x.Name, &x.CreatedAt, &x.LastPushAt, &x.Total, &x.Consumed, &x.Processing, &x.DeadLetter,
			&x.DLQConsumed, &x.Oldest, &x.Newest, &x.OldestPending, &x.TotalConsumed, &x.LastConsumedAt)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: partition counts: %w", interpret(err))
	}
	return out, nil
}

// ListMessagesParams filters [Store.ListMessages]; empty strings match everything.
type ListMessagesParams struct {
	Queue, Partition, Namespace, Task string
	Group                             string // the consumer group statuses are relative to
	Status                            string // pending, processing, completed, dead_letter or ""
	Limit, Offset                     int
}

// MessageRow is one message of a listing, without payload.
type MessageRow struct {
	ID               uuid.UUID
	TransactionID    string
	PartitionID      uuid.UUID
	Queue, Partition string
	Namespace, Task  string
	TraceID          pgtype.UUID
	ProducerSub      pgtype.Text
	Priority         int32
	CreatedAt        time.Time
	Status           string
	LeaseExpiresAt   pgtype.Timestamptz
}

// ListMessages lists messages newest first with their status for one consumer group.
func (s *Store) ListMessages(ctx context.Context, p ListMessagesParams) ([]MessageRow, error) {
	rows, err := s.pool.Query(ctx, q("OpsListMessages"), nullText(p.Queue), nullText(p.Partition), p.Group,
		nullText(p.Status), nullText(p.Namespace), nullText(p.Task), p.Limit, p.Offset)
	if err != nil {
		return nil, fmt.Errorf("store: list messages: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MessageRow, error) {
		var x MessageRow
		err := r.Scan(&x.ID, &x.TransactionID, &x.PartitionID, &x.Queue, &x.Partition, &x.Namespace, &x.Task,
			&x.TraceID, &x.ProducerSub, &x.Priority, &x.CreatedAt, &x.Status, &x.LeaseExpiresAt)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list messages: %w", interpret(err))
	}
	return out, nil
}

// QueueGroups names the consumer groups that exist on a queue.
func (s *Store) QueueGroups(ctx context.Context, queue string) ([]string, error) {
	rows, err := s.pool.Query(ctx, q("OpsQueueGroups"), queue)
	if err != nil {
		return nil, fmt.Errorf("store: queue groups: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: queue groups: %w", interpret(err))
	}
	return out, nil
}

// MessageDetail is one stored message with its queue configuration.
type MessageDetail struct {
	ID                        uuid.UUID
	TransactionID             string
	PartitionID               uuid.UUID
	Queue, Partition          string
	Namespace, Task           string
	Payload                   []byte
	Encrypted                 bool
	TraceID                   pgtype.UUID
	ProducerSub               pgtype.Text
	CreatedAt                 time.Time
	LeaseTime, RetryLimit     int32
	RetryDelay, TTL, Priority int32
	Seq                       int64
}

// MessageConsumer is one consumer group's view of a message.
type MessageConsumer struct {
	Group          string
	Consumed       bool
	LeaseExpiresAt pgtype.Timestamptz // set while the message is leased to the group
	Retries        int32
	DLQError       pgtype.Text
	DLQRetries     pgtype.Int4
}

// GetMessage reads one message and every group's view of it; ErrNotFound when it does not exist.
func (s *Store) GetMessage(ctx context.Context, partitionID uuid.UUID, transactionID string) (*MessageDetail, []MessageConsumer, error) {
	var x MessageDetail
	err := s.pool.QueryRow(ctx, q("OpsGetMessage"), partitionID, transactionID).Scan(&x.ID, &x.TransactionID,
		&x.PartitionID, &x.Queue, &x.Partition, &x.Namespace, &x.Task, &x.Payload, &x.Encrypted, &x.TraceID,
		&x.ProducerSub, &x.CreatedAt, &x.LeaseTime, &x.RetryLimit, &x.RetryDelay, &x.TTL, &x.Priority, &x.Seq)
	if err != nil {
		return nil, nil, fmt.Errorf("store: message %s/%s: %w", partitionID, transactionID, interpret(err))
	}
	rows, err := s.pool.Query(ctx, q("OpsMessageConsumers"), partitionID, x.Seq)
	if err != nil {
		return nil, nil, fmt.Errorf("store: message consumers: %w", interpret(err))
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MessageConsumer, error) {
		var c MessageConsumer
		err := r.Scan(&c.Group, &c.Consumed, &c.LeaseExpiresAt, &c.Retries, &c.DLQError, &c.DLQRetries)
		return c, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: message consumers: %w", interpret(err))
	}
	return &x, cs, nil
}

// DeleteMessage deletes one message with its dead letters and traces; ErrNotFound when it did not exist.
func (s *Store) DeleteMessage(ctx context.Context, partitionID uuid.UUID, transactionID string) error {
	var n int64
	if err := s.pool.QueryRow(ctx, q("OpsDeleteMessage"), partitionID, transactionID).Scan(&n); err != nil {
		return fmt.Errorf("store: delete message: %w", interpret(err))
	}
	if n == 0 {
		return fmt.Errorf("store: delete message %s/%s: %w", partitionID, transactionID, ErrNotFound)
	}
	return nil
}

// DLQByQueue counts dead-letter rows per queue name.
func (s *Store) DLQByQueue(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, q("OpsDLQByQueue"))
	if err != nil {
		return nil, fmt.Errorf("store: dlq by queue: %w", interpret(err))
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, fmt.Errorf("store: dlq by queue: %w", interpret(err))
		}
		out[name] = n
	}
	return out, interpret(rows.Err())
}

// LeaseSummary counts the live leases.
type LeaseSummary struct {
	Active, Partitions, Messages int64
}

// DLQSummary counts dead letters and their most frequent errors.
type DLQSummary struct {
	Total, Partitions int64
	TopErrors         []ErrorCount
}

// ErrorCount is one error text with how many dead letters carry it.
type ErrorCount struct {
	Error string
	Count int64
}

// Overview reads the live lease and dead-letter summaries.
func (s *Store) Overview(ctx context.Context) (LeaseSummary, DLQSummary, error) {
	var l LeaseSummary
	var d DLQSummary
	if err := s.pool.QueryRow(ctx, q("OpsLeases")).Scan(&l.Active, &l.Partitions, &l.Messages); err != nil {
		return l, d, fmt.Errorf("store: leases: %w", interpret(err))
	}
	if err := s.pool.QueryRow(ctx, q("OpsDLQTotals")).Scan(&d.Total, &d.Partitions); err != nil {
		return l, d, fmt.Errorf("store: dlq totals: %w", interpret(err))
	}
	rows, err := s.pool.Query(ctx, q("OpsTopErrors"))
	if err != nil {
		return l, d, fmt.Errorf("store: top errors: %w", interpret(err))
	}
	d.TopErrors, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ErrorCount, error) {
		var e ErrorCount
		err := r.Scan(&e.Error, &e.Count)
		return e, err
	})
	if err != nil {
		return l, d, fmt.Errorf("store: top errors: %w", interpret(err))
	}
	return l, d, nil
}

// QueueEncrypted reports whether a queue stores its payloads encrypted; ErrNotFound for no queue.
func (s *Store) QueueEncrypted(ctx context.Context, queue string) (bool, error) {
	var b bool
	if err := s.pool.QueryRow(ctx, q("OpsEncryptedQueue"), queue).Scan(&b); err != nil {
		return false, fmt.Errorf("store: queue %q encryption: %w", queue, interpret(err))
	}
	return b, nil
}

// AnyEncryptedQueue reports whether some queue has encryption enabled.
func (s *Store) AnyEncryptedQueue(ctx context.Context) (bool, error) {
	var b bool
	if err := s.pool.QueryRow(ctx, q("OpsAnyEncryptedQueue")).Scan(&b); err != nil {
		return false, fmt.Errorf("store: encrypted queues: %w", interpret(err))
	}
	return b, nil
}
