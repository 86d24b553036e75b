package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// QueueOpsPoint is one bucket of one queue's counters, summed over brokers.
type QueueOpsPoint struct {
	Bucket time.Time
	QueueOps
}

// QueueOpsSeries reads the counters between from and to in buckets of bucketMinutes; queue "" = all.
func (s *Store) QueueOpsSeries(ctx context.Context, from, to time.Time, queue string, bucketMinutes int) ([]QueueOpsPoint, error) {
	rows, err := s.pool.Query(ctx, q("QueueOpsSeries"), from, to, nullText(queue), bucketMinutes)
	if err != nil {
		return nil, fmt.Errorf("store: queue ops: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (QueueOpsPoint, error) {
		var p QueueOpsPoint
		err := r.Scan(&p.Bucket, &p.Queue, &p.PushRequests, &p.PushMessages, &p.PopRequests, &p.PopMessages,
			&p.PopEmpty, &p.AckSuccess, &p.AckFailed, &p.DLQ, &p.LagSumMs, &p.LagCount, &p.LagMaxMs)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: queue ops: %w", interpret(err))
	}
	return out, nil
}

// RetentionPoint is one bucket of deletions of one kind on one queue.
type RetentionPoint struct {
	Bucket  time.Time
	Queue   string
	Kind    string
	Deleted int64
}

// RetentionSeries reads the retention history between from and to in buckets of bucketMinutes.
func (s *Store) RetentionSeries(ctx context.Context, from, to time.Time, bucketMinutes int) ([]RetentionPoint, error) {
	rows, err := s.pool.Query(ctx, q("RetentionSeries"), from, to, bucketMinutes)
	if err != nil {
		return nil, fmt.Errorf("store: retention series: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RetentionPoint, error) {
		var p RetentionPoint
		err := r.Scan(&p.Bucket, &p.Queue, &p.Kind, &p.Deleted)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: retention series: %w", interpret(err))
	}
	return out, nil
}
