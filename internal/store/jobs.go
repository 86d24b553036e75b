package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Advisory lock keys of the background jobs: one broker runs each pass, the others skip it.
const (
	statsLockKey     int64 = 737002
	retentionLockKey int64 = 737001 // the original's retention key
)

// errSkipped ends a job transaction whose lock another broker holds.
var errSkipped = fmt.Errorf("store: skipped: another broker holds the lock")

// withJobLock runs fn in a transaction holding the advisory lock key; ran is false (and fn not called)
// when another broker holds it.
func (s *Store) withJobLock(ctx context.Context, key int64, fn func(pgx.Tx) error) (ran bool, err error) {
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, q("JobTryLock"), key).Scan(&ok); err != nil {
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

// VacuumPending vacuums pending_partitions when it holds at least as many dead rows as live ones, and
// at least minDead, and reports whether it did. Autovacuum gets there too, but up to its naptime (a
// minute by default) and its cost delay later, while every wildcard pop walks past the dead entries at
// the front of its line. VACUUM skips the table while another session vacuums it (SKIP_LOCKED), so
// brokers sharing a database need no lock of their own, and it never blocks reads or writes.
//
// Only this table: its statistics after a vacuum change no plan for the worse (the pop and ack
// statements that read it keep their key lookups whatever the statistics, TestHotPathPlans and
// TestAckPlansAfterSmallTables), while vacuuming partitions or partition_consumers right after a large
// queue's deletion re-plans statements that still depend on their row counts (Known issue 5).
func (s *Store) VacuumPending(ctx context.Context, minDead int64) (bool, error) {
	var due bool
	if err := s.pool.QueryRow(ctx, q("PendingDeadRows"), minDead).Scan(&due); err != nil {
		return false, fmt.Errorf("store: vacuum pending_partitions: %w", interpret(err))
	}
	if !due {
		return false, nil
	}
	// The simple protocol: VACUUM must run outside any transaction block and gains nothing from a
	// prepared statement.
	if _, err := s.pool.Exec(ctx, q("VacuumPendingPartitions"), pgx.QueryExecModeSimpleProtocol); err != nil {
		return false, fmt.Errorf("store: vacuum pending_partitions: %w", interpret(err))
	}
	return true, nil
}

// PendingLine is one sample of the statistics the vacuum job reads the pops' walk of pending_partitions
// from (queries/jobs.sql PendingLineSample). Scans, Entries and Pages are cumulative counters of the line
// index (pending_partitions_line_idx): the job compares two samples.
type PendingLine struct {
	Scans      int64 // index scans: one per step of a wildcard pop's walk
	Entries    int64 // index entries added: one descent each
	Pages      int64 // index pages read (hits and reads)
	IndexPages int64 // the index's size in pages
}

// PendingLineSample reads the counters of pending_partitions' line index; ok is false when the table or
// the index is not in the schema.
func (s *Store) PendingLineSample(ctx context.Context) (l PendingLine, ok bool, err error) {
	err = s.pool.QueryRow(ctx, q("PendingLineSample")).Scan(&l.Scans, &l.Entries, &l.Pages, &l.IndexPages)
	if errors.Is(err, pgx.ErrNoRows) {
		return PendingLine{}, false, nil
	}
	if err != nil {
		return PendingLine{}, false, fmt.Errorf("store: sample pending_partitions: %w", interpret(err))
	}
	return l, true, nil
}
