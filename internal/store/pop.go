package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// QueueMode is the consumer group of queue-mode (competing) consumers. Every queue has it, so pushes
// keep its pending-work records without it subscribing.
const QueueMode = "__QUEUE_MODE__"

// PopParams selects what one pop claims.
type PopParams struct {
	Queue         string
	Group         string
	Partition     *string // invalid (NULL) = any partition
	MaxPartitions int
	Batch         int
	LeaseID       uuid.UUID // minted by the caller; its last 8 bytes end the claim's lease id (see PoppedMessage.LeaseID)
	AutoAck       bool
}

// PoppedMessage is one delivered message with the partition it came from.
type PoppedMessage struct {
	PartitionID   uuid.UUID
	Partition     string
	Retries       int32
	ID            uuid.UUID
	TransactionID string
	TraceID       *uuid.UUID
	Payload       []byte
	ProducerSub   *string
	Encrypted     bool
	CreatedAt     time.Time
	// The lease the pop claimed its partitions under (the same in every row): its first 8 bytes are those of
	// the lowest claimed partition's id, by which ExtendLease finds it (queries/pop.sql).
	LeaseID uuid.UUID
}

// Pop claims partitions and reads their messages in one statement (see queries/pop.sql). An empty
// result means nothing was claimable.
//
// The statement runs in its own transaction, pipelined with its settings in one round-trip. Unless it
// is autoAck, the commit does not wait for its WAL flush: a lease lost in a crash of PostgreSQL only
// means its messages are delivered again, as when a lease expires, which at-least-once allows; any later
// synchronous commit (the ack) flushes it first. autoAck consumes at delivery and stays synchronous.
func (s *Store) Pop(ctx context.Context, p PopParams) (out []PoppedMessage, err error) {
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release() // a connection left inside a transaction is discarded by the pool
	b := &pgx.Batch{}
	b.Queue(q("Begin"))
	b.Queue(q("HotPathSettings"), p.AutoAck)
	b.Queue(q("Pop"), p.Queue, p.Group, p.Partition, p.MaxPartitions, p.Batch, p.LeaseID, p.AutoAck, s.now()).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var m PoppedMessage
			if err := rows.Scan(&m.PartitionID, &m.Partition, &m.Retries, &m.ID, &m.TransactionID, &m.TraceID,
				&m.Payload, &m.ProducerSub, &m.Encrypted, &m.CreatedAt, &m.LeaseID); err != nil {
				return err
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	b.Queue(q("Commit"))
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		if !c.Conn().IsClosed() {
			_, _ = c.Exec(context.WithoutCancel(ctx), q("Rollback"))
		}
		return nil, fmt.Errorf("store: pop %q: %w", p.Queue, interpret(err))
	}
	return out, nil
}
