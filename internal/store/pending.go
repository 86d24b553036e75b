package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// PendingKey names a partition of a queue as seen by one consumer group.
type PendingKey struct{ Queue, Partition, Group string }

// PendingWork reports, per key, whether its partition has a pending-work record for the group
// (queries/pending.sql PendingWork): false means it has no work for the group, now or later, until a
// push, a seek or a retried dead letter adds some.
func (s *Store) PendingWork(ctx context.Context, keys []PendingKey) ([]bool, error) {
	queues, parts, groups := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		queues[i], parts[i], groups[i] = k.Queue, k.Partition, k.Group
	}
	rows, err := s.pool.Query(ctx, q("PendingWork"), queues, parts, groups)
	if err != nil {
		return nil, fmt.Errorf("store: pending work: %w", interpret(err))
	}
	out := make([]bool, len(keys))
	ords, err := collectRows(rows, func(r pgx.Rows) (i int64, err error) { return i, r.Scan(&i) })
	if err != nil {
		return nil, fmt.Errorf("store: pending work: %w", interpret(err))
	}
	for _, i := range ords {
		out[i-1] = true
	}
	return out, nil
}
