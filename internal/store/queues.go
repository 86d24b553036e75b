package store

import (
	"context"
	"fmt"

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
func (s *Store) ConfigureQueue(ctx context.Context, name string, o QueueOptions) (queueID, defaultPartition uuid.UUID, err error) {
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, q("ConfigureQueue"), name, o.Namespace, o.Task, o.Priority, o.LeaseTime, o.RetryLimit,
			o.RetryDelay, o.MaxSize, o.TTL, o.DeadLetterQueue, o.DLQAfterMaxRetries, o.DelayedProcessing, o.WindowBuffer,
			o.RetentionSeconds, o.CompletedRetentionSeconds, o.RetentionEnabled, o.EncryptionEnabled,
			o.MaxWaitTimeSeconds).Scan(&queueID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, q("EnsureDefaultPartition"), queueID).Scan(&defaultPartition)
	})
	if err != nil {
		return uuid.Nil, uuid.Nil, fmt.Errorf("store: configure %q: %w", name, interpret(err))
	}
	return queueID, defaultPartition, nil
}
