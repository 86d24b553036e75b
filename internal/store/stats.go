package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// defaultStatsSlice is how many partitions one statement of a stats pass reads. Each statement takes its own
// snapshot, and the pass writes (and so holds a transaction id) only at its end: a pass over many
// partitions never holds back vacuum for longer than one slice, which the hot rows of a busy queue need.
const defaultStatsSlice = 10_000

// queueCounts is one queue's sums over the slices of a pass.
type queueCounts struct {
	total, pending, processing, completed, deadLetter int64
	oldest                                            *time.Time
}

// RefreshQueueStats recomputes the rolled-up queue_stats table from counters the hot path keeps (see
// StatsPartitionSlice), a slice of partitions per statement. ran is false when another broker did it
// at the same moment.
func (s *Store) RefreshQueueStats(ctx context.Context) (ran bool, err error) {
	ran, err = s.withJobLock(ctx, statsJob, func(tx pgx.Tx) error {
		// Every statement of the pass reads by key (a few probes per partition): the same index-walk
		// plans at any table size as the hot path's.
		if _, err := tx.Exec(ctx, q("HotPathSettings"), true); err != nil {
			return err
		}
		sums := map[uuid.UUID]*queueCounts{}
		size := s.statsSlice
		if size <= 0 {
			size = defaultStatsSlice
		}
		for after, n := uuid.Nil, int64(size); n == int64(size); {
			var err error
			if n, after, err = statsSliceInto(ctx, tx, after, size, sums); err != nil {
				return err
			}
		}
		return writeQueueStats(ctx, tx, sums)
	})
	if err != nil {
		return false, fmt.Errorf("store: refresh queue stats: %w", err)
	}
	return ran, nil
}

// QueueGauges reads the rolled-up counts of up to limit queues, newest first, for the metrics gauges:
// only Name, Pending, Processing and OldestPendingAt of each QueueSummary are filled.
func (s *Store) QueueGauges(ctx context.Context, limit int) ([]QueueSummary, error) {
	return collect(ctx, s, "QueueGauges", func(r pgx.Rows) (x QueueSummary, err error) {
		err = r.Scan(&x.Name, &x.Pending, &x.Processing, &x.OldestPendingAt)
		return x, err
	}, limit)
}

// statsSliceInto adds the counts of the size partitions after id after to sums and returns how
// many partitions it read and the last one's id.
func statsSliceInto(ctx context.Context, tx pgx.Tx, after uuid.UUID, size int, sums map[uuid.UUID]*queueCounts) (n int64, last uuid.UUID, err error) {
	rows, err := tx.Query(ctx, q("StatsPartitionSlice"), after, size)
	if err != nil {
		return 0, after, err
	}
	err = eachRow(rows, func(r pgx.Rows) error {
		var id uuid.UUID
		var c queueCounts
		if err := r.Scan(&id, &c.total, &c.pending, &c.processing, &c.completed, &c.deadLetter, &c.oldest, &last, &n); err != nil {
			return err
		}
		sum := sums[id]
		if sum == nil {
			sums[id] = &c
			return nil
		}
		sum.total += c.total
		sum.pending += c.pending
		sum.processing += c.processing
		sum.completed += c.completed
		sum.deadLetter += c.deadLetter
		if c.oldest != nil && (sum.oldest == nil || c.oldest.Before(*sum.oldest)) {
			sum.oldest = c.oldest
		}
		return nil
	})
	if err != nil {
		return 0, after, err
	}
	return n, last, nil
}

// writeQueueStats rewrites queue_stats from a pass's sums.
func writeQueueStats(ctx context.Context, tx pgx.Tx, sums map[uuid.UUID]*queueCounts) error {
	n := len(sums)
	ids, oldest := make([]uuid.UUID, 0, n), make([]*time.Time, 0, n)
	cols := make([][]int64, 5)
	for id, c := range sums {
		ids, oldest = append(ids, id), append(oldest, c.oldest)
		for i, v := range []int64{c.total, c.pending, c.processing, c.completed, c.deadLetter} {
			cols[i] = append(cols[i], v)
		}
	}
	_, err := tx.Exec(ctx, q("StatsWrite"), ids, cols[0], cols[1], cols[2], cols[3], cols[4], oldest)
	return err
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
