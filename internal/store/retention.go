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
	BatchSize            int       // messages per partition per statement
	MaxRounds            int       // statements per step and pass; 0: until the step has caught up
	Deadline             time.Time // after it, a step makes one statement and passes on (zero: none)
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

// RunRetention does one retention pass under the retention advisory lock, one transaction per
// statement: a pass deleting a backlog in one transaction held the xmin horizon for all of it, and
// every in-place update of the hot rows meanwhile left versions no vacuum could remove
// (docs/performance.md, target 7). A step goes on until a statement finds nothing, so a pass keeps up
// with any rate (a fixed cap of 100 statements fell behind above ~300 messages per second and partition
// at the default interval); past the Deadline each step still makes one statement, so that a backlog in
// one step never starves the others. Ran is false when another broker held the lock at the first
// statement; a pass that loses it later stops there, the other broker going on.
func (j Jobs) RunRetention(ctx context.Context, p RetentionParams) (RetentionResult, error) {
	s := j.s
	res := RetentionResult{Expired: map[string]int64{}, Completed: map[string]int64{}, Partitions: map[string]int64{}}
	// stmt runs one statement in its own locked transaction; held is false when the lock was taken.
	// JIT is off for the reason given at ExpireWaiting: the statements' cost estimates grow with the
	// partitions of the queues that set the options (176 000 at one queue of 10 000 partitions, past
	// jit_above_cost), although a pass with little to delete reads little.
	stmt := func(fn func(tx pgx.Tx) error) (held bool, err error) {
		held, err = s.withJobLock(ctx, retentionJob, func(tx pgx.Tx) error {
			if err := jitOff(ctx, tx); err != nil {
				return err
			}
			return fn(tx)
		})
		res.Ran = res.Ran || held
		return held, err
	}
	rounds := func(name string, into map[string]int64, args ...any) (held bool, err error) {
		for n := 0; p.MaxRounds <= 0 || n < p.MaxRounds; n++ {
			if n > 0 && !p.Deadline.IsZero() && time.Now().After(p.Deadline) {
				return true, nil
			}
			var got int64
			round := map[string]int64{} // counted once its transaction committed
			held, err = stmt(func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, q(name), args...)
				if err != nil {
					return err
				}
				return eachRow(rows, func(r pgx.Rows) error {
					var queue string
					var n int64
					if err := r.Scan(&queue, &n); err != nil {
						return err
					}
					round[queue] += n
					got += n
					return nil
				})
			})
			if err != nil || !held {
				return held, err
			}
			for queue, n := range round {
				into[queue] += n
			}
			if got == 0 {
				return true, nil
			}
		}
		return true, nil
	}
	err := func() error {
		for _, step := range []struct {
			name string
			into map[string]int64
			arg  any
		}{
			{"RetentionDeleteExpired", res.Expired, p.BatchSize},
			{"RetentionDeleteCompleted", res.Completed, p.BatchSize},
			{"RetentionCleanupPartitions", res.Partitions, p.PartitionCleanupDays},
		} {
			if held, err := rounds(step.name, step.into, p.Now, step.arg); err != nil || !held {
				return err
			}
		}
		_, err := stmt(func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, q("RetentionTrimHistory"), p.Now, p.MetricsRetentionDays).Scan(&res.HistoryRowsTrimmed)
		})
		return err
	}()
	// Messages left these queues' partitions (in the statements that committed, even if a later one
	// failed); a partition removed leaves stored counts that the stats pass's sweep subtracts.
	for _, m := range []map[string]int64{res.Expired, res.Completed} {
		for queue, n := range m {
			if n > 0 {
				s.changed.noteQueue(queue, false)
			}
		}
	}
	if err != nil {
		return res, fmt.Errorf("store: retention: %w", err)
	}
	return res, nil
}
