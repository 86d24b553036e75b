package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// QueueOpsPoint is one bucket of one queue's counters, summed over brokers.
type QueueOpsPoint struct {
	Bucket time.Time
	QueueOps
}

// QueueOpsSeries reads the counters between from and to in buckets of bucketMinutes; queue "" = all.
func (a Analytics) QueueOpsSeries(ctx context.Context, from, to time.Time, queue string, bucketMinutes int) ([]QueueOpsPoint, error) {
	s := a.s
	return collect(ctx, s, "QueueOpsSeries", func(r pgx.Rows) (p QueueOpsPoint, err error) {
		err = r.Scan(&p.Bucket, &p.Queue, &p.PushRequests, &p.PushMessages, &p.PopRequests, &p.PopMessages,
			&p.PopEmpty, &p.AckSuccess, &p.AckFailed, &p.DLQ, &p.LagSumMs, &p.LagCount, &p.LagMaxMs)
		return p, err
	}, from, to, nullText(queue), bucketMinutes)
}

// RetentionPoint is one bucket of deletions of one kind on one queue.
type RetentionPoint struct {
	Bucket  time.Time
	Queue   string
	Kind    string
	Deleted int64
}

// RetentionSeries reads the retention history between from and to in buckets of bucketMinutes.
func (a Analytics) RetentionSeries(ctx context.Context, from, to time.Time, bucketMinutes int) ([]RetentionPoint, error) {
	s := a.s
	return collect(ctx, s, "RetentionSeries", func(r pgx.Rows) (p RetentionPoint, err error) {
		err = r.Scan(&p.Bucket, &p.Queue, &p.Kind, &p.Deleted)
		return p, err
	}, from, to, bucketMinutes)
}
