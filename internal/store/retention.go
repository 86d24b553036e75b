package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RetentionParams tune one retention pass.
type RetentionParams struct {
	Now                  time.Time
	BatchSize            int // messages per partition per statement
	MaxRounds            int // statements per step and pass
	PartitionCleanupDays int
	MetricsRetentionDays int
}

// RetentionResult counts what one pass deleted, per kind and queue.
type RetentionResult struct {
	Ran                bool
	Expired            map[string]int64
	Completed          map[string]int64
	Partitions         map[string]int64
	HistoryRowsTrimmed int64
}

// RunRetention does one retention pass in one transaction under the retention advisory lock; Ran is
// false when another broker holds it.
func (j Jobs) RunRetention(ctx context.Context, p RetentionParams) (RetentionResult, error) {
	s := j.s
	res := RetentionResult{Expired: map[string]int64{}, Completed: map[string]int64{}, Partitions: map[string]int64{}}
	if p.MaxRounds <= 0 {
		p.MaxRounds = 100
	}
	rounds := func(tx pgx.Tx, name string, into map[string]int64, args ...any) error {
		for range p.MaxRounds {
			rows, err := tx.Query(ctx, q(name), args...)
			if err != nil {
				return err
			}
			var got int64
			err = eachRow(rows, func(r pgx.Rows) error {
				var queue string
				var n int64
				if err := r.Scan(&queue, &n); err != nil {
					return err
				}
				into[queue] += n
				got += n
				return nil
			})
			if err != nil {
				return err
			}
			if got == 0 {
				return nil
			}
		}
		return nil
	}
	ran, err := s.withJobLock(ctx, retentionJob, func(tx pgx.Tx) error {
		if err := rounds(tx, "RetentionDeleteExpired", res.Expired, p.Now, p.BatchSize); err != nil {
			return err
		}
		if err := rounds(tx, "RetentionDeleteCompleted", res.Completed, p.Now, p.BatchSize); err != nil {
			return err
		}
		if err := rounds(tx, "RetentionCleanupPartitions", res.Partitions, p.Now, p.PartitionCleanupDays); err != nil {
			return err
		}
		return tx.QueryRow(ctx, q("RetentionTrimHistory"), p.Now, p.MetricsRetentionDays).Scan(&res.HistoryRowsTrimmed)
	})
	res.Ran = ran
	if err != nil {
		return res, fmt.Errorf("store: retention: %w", err)
	}
	// Messages left these queues' partitions; a partition removed leaves stored counts that the stats
	// pass's sweep subtracts.
	for _, m := range []map[string]int64{res.Expired, res.Completed} {
		for queue, n := range m {
			if n > 0 {
				s.changed.noteQueue(queue, false)
			}
		}
	}
	return res, nil
}
