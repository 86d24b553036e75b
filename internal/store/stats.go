package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RefreshQueueStats recomputes the rolled-up queue_stats table. ran is false when another broker did
// it at the same moment.
func (s *Store) RefreshQueueStats(ctx context.Context) (ran bool, err error) {
	ran, err = s.withJobLock(ctx, statsLockKey, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q("StatsRefresh"))
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

// Add adds o's counts to q's; the lag maximum is the larger of the two.
func (q *QueueOps) Add(o QueueOps) {
	q.PushRequests += o.PushRequests
	q.PushMessages += o.PushMessages
	q.PopRequests += o.PopRequests
	q.PopMessages += o.PopMessages
	q.PopEmpty += o.PopEmpty
	q.AckSuccess += o.AckSuccess
	q.AckFailed += o.AckFailed
	q.DLQ += o.DLQ
	q.LagSumMs += o.LagSumMs
	q.LagCount += o.LagCount
	q.LagMaxMs = max(q.LagMaxMs, o.LagMaxMs)
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
	if _, err := s.pool.Exec(ctx, q("QueueOpsAdd"), args...); err != nil {
		return fmt.Errorf("store: add queue ops: %w", interpret(err))
	}
	return nil
}
