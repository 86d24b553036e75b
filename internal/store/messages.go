package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

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
	TraceID          *uuid.UUID
	ProducerSub      *string
	Priority         int32
	CreatedAt        time.Time
	Status           string
	LeaseExpiresAt   *time.Time
}

// ListMessages lists messages newest first with their status for one consumer group.
func (m Messages) ListMessages(ctx context.Context, p ListMessagesParams) ([]MessageRow, error) {
	s := m.s
	return collect(ctx, s, "MessageList", func(r pgx.Rows) (x MessageRow, err error) {
		err = r.Scan(&x.ID, &x.TransactionID, &x.PartitionID, &x.Queue, &x.Partition, &x.Namespace, &x.Task,
			&x.TraceID, &x.ProducerSub, &x.Priority, &x.CreatedAt, &x.Status, &x.LeaseExpiresAt)
		return x, err
	}, nullText(p.Queue), nullText(p.Partition), p.Group, nullText(p.Status), nullText(p.Namespace),
		nullText(p.Task), p.Limit, p.Offset, s.now())
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
	TraceID                   *uuid.UUID
	ProducerSub               *string
	CreatedAt                 time.Time
	LeaseTime, RetryLimit     int32
	RetryDelay, TTL, Priority int32
	Seq                       int64
}

// MessageConsumer is one consumer group's view of a message.
type MessageConsumer struct {
	Group          string
	Consumed       bool
	LeaseExpiresAt *time.Time // set while the message is leased to the group
	Retries        int32
	DLQError       *string
	DLQRetries     *int32
}

// GetMessage reads one message and every group's view of it; ErrNotFound when it does not exist.
func (m Messages) GetMessage(ctx context.Context, partitionID uuid.UUID, transactionID string) (*MessageDetail, []MessageConsumer, error) {
	s := m.s
	var x MessageDetail
	err := s.pool.QueryRow(ctx, q("MessageGet"), partitionID, transactionID).Scan(&x.ID, &x.TransactionID,
		&x.PartitionID, &x.Queue, &x.Partition, &x.Namespace, &x.Task, &x.Payload, &x.Encrypted, &x.TraceID,
		&x.ProducerSub, &x.CreatedAt, &x.LeaseTime, &x.RetryLimit, &x.RetryDelay, &x.TTL, &x.Priority, &x.Seq)
	if err != nil {
		return nil, nil, fmt.Errorf("store: message %s/%s: %w", partitionID, transactionID, interpret(err))
	}
	rows, err := s.pool.Query(ctx, q("MessageConsumerList"), partitionID, x.Seq, s.now())
	if err != nil {
		return nil, nil, fmt.Errorf("store: message consumers: %w", interpret(err))
	}
	cs, err := collectRows(rows, func(r pgx.Rows) (MessageConsumer, error) {
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
func (m Messages) DeleteMessage(ctx context.Context, partitionID uuid.UUID, transactionID string) error {
	s := m.s
	s.changed.notePartition(partitionID)
	var n int64
	if err := s.pool.QueryRow(ctx, q("MessageDelete"), partitionID, transactionID).Scan(&n); err != nil {
		return fmt.Errorf("store: delete message: %w", interpret(err))
	}
	if n == 0 {
		return fmt.Errorf("store: delete message %s/%s: %w", partitionID, transactionID, ErrNotFound)
	}
	return nil
}
