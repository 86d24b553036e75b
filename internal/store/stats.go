package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// defaultStatsSlice is how many partitions one statement of a stats pass recomputes.
const defaultStatsSlice = 2_000

// sweepSlice is how many partitions every pass recomputes whatever was handed over, in id order and
// wrapping around: it puts right the counts of a change no broker handed over (a broker that died
// before its next hand-over) and removes the stored counts of partitions that no longer exist, within
// partitions/sweepSlice passes (at 100 000 partitions and the default 10 s interval, under 3 hours)
// for about 3 ms of PostgreSQL time per pass (bench -scenarios background).
const sweepSlice = 100

// statsSweep is where the sweep goes on at the next pass of this store.
type statsSweep struct {
	mu    sync.Mutex
	after uuid.UUID
}

// RefreshQueueStats hands this store's changes over (every broker does, at every pass) and, unless
// another broker holds the job's lock, recomputes the counts of the partitions every broker handed
// over, of those with messages leased at the last count (a lease ends by time alone) and of the
// sweep's next slice; each queue's row of queue_stats moves by the difference in the same statement
// (queries/stats.sql, StatsApply). A pass over a database where nothing changed reads two index
// ranges and writes one row. ran is false when another broker did it at the same moment.
//
// Each slice commits on its own: a write transaction holds the xmin horizon until it ends, and a pass
// over 100 000 changed partitions in one took 14 s, during which no dead entry of the pops' line
// could be removed, and pops at 100 000 partitions read 15 times the buffers (docs/decisions.md
// "Stats from counters"). A slice's take and its counts commit together, so a pass cut short leaves
// the rest handed over for the next one; passes of two brokers may interleave slices, each under the
// job's lock, and each slice locks the queues whose counts it moves.
func (j Jobs) RefreshQueueStats(ctx context.Context) (ran bool, err error) {
	s := j.s
	if err := s.handOverChanges(ctx); err != nil {
		return false, fmt.Errorf("store: refresh queue stats: hand over: %w", err)
	}
	s.statsSweep.mu.Lock()
	defer s.statsSweep.mu.Unlock()
	size := s.statsSlice
	if size <= 0 {
		size = defaultStatsSlice
	}
	queues := map[uuid.UUID]struct{}{}
	apply := func(tx pgx.Tx, ids []uuid.UUID) error {
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		ids = slices.Compact(ids)
		for len(ids) > 0 {
			batch := ids[:min(len(ids), size)]
			ids = ids[len(batch):]
			if _, err := tx.Exec(ctx, q("StatsLockQueues"), batch); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, q("StatsApply"), batch)
			if err != nil {
				return err
			}
			if err := eachRow(rows, func(r pgx.Rows) error {
				var id uuid.UUID
				err := r.Scan(&id)
				queues[id] = struct{}{}
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}
	// slice runs fn in a transaction of its own under the job's lock, with the hot path's plans: every
	// statement of the pass reads by key (a few probes per partition).
	slice := func(fn func(tx pgx.Tx) error) (bool, error) {
		return s.withJobLock(ctx, statsJob, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, q("HotPathSettings"), true); err != nil {
				return err
			}
			return fn(tx)
		})
	}
	next := s.statsSweep.after
	ran, err = slice(func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q("StatsLeased"))
		if err != nil {
			return err
		}
		ids, err := collectRows(rows, scanOne[uuid.UUID])
		if err != nil {
			return err
		}
		if next, err = sweepInto(ctx, tx, next, &ids); err != nil {
			return err
		}
		return apply(tx, ids)
	})
	if err != nil || !ran {
		return false, wrapStats(err)
	}
	s.statsSweep.after = next
	for more := true; more; {
		ok, err := slice(func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, q("StatsDirtyTake"), size)
			if err != nil {
				return err
			}
			taken, err := collectRows(rows, scanOne[uuid.UUID])
			if err != nil {
				return err
			}
			more = len(taken) == size
			return apply(tx, taken)
		})
		if err != nil {
			return true, wrapStats(err)
		}
		more = more && ok // a broker that took the lock meanwhile takes the rest
	}
	_, err = slice(func(tx pgx.Tx) error {
		if len(queues) > 0 {
			if _, err := tx.Exec(ctx, q("StatsOldest"), slices.Collect(maps.Keys(queues))); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, q("StatsPassMark"))
		return err
	})
	return true, wrapStats(err)
}

func wrapStats(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: refresh queue stats: %w", err)
}

// sweepInto adds the sweep's slice after id after to ids and returns where the next one starts
// (uuid.Nil once the last partition was reached).
func sweepInto(ctx context.Context, tx pgx.Tx, after uuid.UUID, ids *[]uuid.UUID) (uuid.UUID, error) {
	rows, err := tx.Query(ctx, q("StatsReconcileSlice"), after, sweepSlice)
	if err != nil {
		return after, err
	}
	n, next := 0, after
	err = eachRow(rows, func(r pgx.Rows) error {
		var id uuid.UUID
		var partition bool
		if err := r.Scan(&id, &partition); err != nil {
			return err
		}
		*ids = append(*ids, id)
		if partition {
			n++
			if slices.Compare(id[:], next[:]) > 0 {
				next = id
			}
		}
		return nil
	})
	if n < sweepSlice {
		next = uuid.Nil
	}
	return next, err
}

// QueueGauges reads the rolled-up counts of up to limit queues, newest first, for the metrics gauges:
// only Name, Pending, Processing and OldestPendingAt of each QueueSummary are filled.
func (j Jobs) QueueGauges(ctx context.Context, limit int) ([]QueueSummary, error) {
	s := j.s
	return collect(ctx, s, "QueueGauges", func(r pgx.Rows) (x QueueSummary, err error) {
		err = r.Scan(&x.Name, &x.Pending, &x.Processing, &x.OldestPendingAt)
		return x, err
	}, limit)
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
func (j Jobs) AddQueueOps(ctx context.Context, now time.Time, broker string, ops []QueueOps) error {
	s := j.s
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
