package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// PopParams selects what one pop claims.
type PopParams struct {
	Queue         string
	Group         string
	Partition     *string // invalid (NULL) = any partition
	MaxPartitions int
	Batch         int
	LeaseID       uuid.UUID
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
}

// Pop claims partitions and reads their messages in one statement (see queries/pop.sql). An empty
// result means nothing was claimable.
func (s *Store) Pop(ctx context.Context, p PopParams) ([]PoppedMessage, error) {
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, q("Pop"), p.Queue, p.Group, p.Partition, p.MaxPartitions, p.Batch, p.LeaseID, p.AutoAck)
	if err != nil {
		return nil, fmt.Errorf("store: pop %q: %w", p.Queue, interpret(err))
	}
	defer rows.Close()
	var out []PoppedMessage
	for rows.Next() {
		var m PoppedMessage
		if err := rows.Scan(&m.PartitionID, &m.Partition, &m.Retries, &m.ID, &m.TransactionID, &m.TraceID,
			&m.Payload, &m.ProducerSub, &m.Encrypted, &m.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: pop %q: %w", p.Queue, interpret(err))
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pop %q: %w", p.Queue, interpret(err))
	}
	return out, nil
}
