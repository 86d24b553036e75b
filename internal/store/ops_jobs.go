package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Advisory lock keys of the background jobs: one broker runs each pass, the others skip it.
const (
	StatsLockKey     int64 = 737002
	RetentionLockKey int64 = 737001 // the original's retention key
)

// errSkipped ends a job transaction whose lock another broker holds.
var errSkipped = fmt.Errorf("store: skipped: another broker holds the lock")

// withJobLock runs fn in a transaction holding the advisory lock key; ran is false (and fn not called)
// when another broker holds it.
func (s *Store) withJobLock(ctx context.Context, key int64, fn func(pgx.Tx) error) (ran bool, err error) {
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, q("OpsTryLock"), key).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return errSkipped
		}
		return fn(tx)
	})
	if err == errSkipped {
		return false, nil
	}
	return err == nil, interpret(err)
}

// RefreshQueueStats recomputes the rolled-up queue_stats table. ran is false when another broker did
// it at the same moment.
func (s *Store) RefreshQueueStats(ctx context.Context) (ran bool, err error) {
	ran, err = s.withJobLock(ctx, StatsLockKey, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q("OpsRefreshQueueStats"))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: refresh queue stats: %w", err)
	}
	return ran, nil
}

// QueueOps is one queue's operation counters over an interval.
type QueueOps struct {
	Queue                              string
	PushRequests, PushMessages         int64
	PopRequests, PopMessages, PopEmpty int64
	AckSuccess, AckFailed, DLQ         int64
	LagSumMs, LagCount, LagMaxMs       int64
}

// AddQueueOps adds this broker's counter deltas to the minute bucket of now.
func (s *Store) AddQueueOps(ctx context.Context, now time.Time, broker string, ops []QueueOps) error {
	if len(ops) == 0 {
		return nil
	}
	n := len(ops)
	cols := make([][]int64, 11)
	for i := range cols {
		cols[i] = make([]int64, n)
	}
	names, brokers := make([]string, n), make([]string, n)
	for i, o := range ops {
		names[i], brokers[i] = o.Queue, broker
		for j, v := range []int64{o.PushRequests, o.PushMessages, o.PopRequests, o.PopMessages, o.PopEmpty,
			o.AckSuccess, o.AckFailed, o.DLQ, o.LagSumMs, o.LagCount, o.LagMaxMs} {
			cols[j][i] = v
		}
	}
	args := []any{now, names, brokers}
	for _, c := range cols {
		args = append(args, c)
	}
	if _, err := s.pool.Exec(ctx, q("OpsAddQueueOps"), args...); err != nil {
		return fmt.Errorf("store: add queue ops: %w", interpret(err))
	}
	return nil
}

// QueueOpsPoint is one bucket of one queue's counters, summed over brokers.
type QueueOpsPoint struct {
	Bucket time.Time
	QueueOps
}

// QueueOpsSeries reads the counters between from and to in buckets of bucketMinutes; queue "" = all.
func (s *Store) QueueOpsSeries(ctx context.Context, from, to time.Time, queue string, bucketMinutes int) ([]QueueOpsPoint, error) {
	rows, err := s.pool.Query(ctx, q("OpsQueueOpsSeries"), from, to, nullText(queue), bucketMinutes)
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
	rows, err := s.pool.Query(ctx, q("OpsRetentionSeries"), from, to, bucketMinutes)
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
func (s *Store) RunRetention(ctx context.Context, p RetentionParams) (RetentionResult, error) {
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
			for rows.Next() {
				var queue string
				var n int64
				if err := rows.Scan(&queue, &n); err != nil {
					rows.Close()
					return err
				}
				into[queue] += n
				got += n
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if got == 0 {
				return nil
			}
		}
		return nil
	}
	ran, err := s.withJobLock(ctx, RetentionLockKey, func(tx pgx.Tx) error {
		if err := rounds(tx, "OpsDeleteExpired", res.Expired, p.Now, p.BatchSize); err != nil {
			return err
		}
		if err := rounds(tx, "OpsDeleteCompleted", res.Completed, p.Now, p.BatchSize); err != nil {
			return err
		}
		if err := rounds(tx, "OpsCleanupPartitions", res.Partitions, p.Now, p.PartitionCleanupDays); err != nil {
			return err
		}
		return tx.QueryRow(ctx, q("OpsTrimHistory"), p.Now, p.MetricsRetentionDays).Scan(&res.HistoryRowsTrimmed)
	})
	res.Ran = ran
	if err != nil {
		return res, fmt.Errorf("store: retention: %w", err)
	}
	return res, nil
}
