package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The background jobs, by the name their advisory lock key is derived from (queries/jobs.sql JobTryLock):
// one broker runs each pass, the others skip it. The key also hashes the schema, so brokers serving
// different schemas of one database each run their own passes instead of skipping the other's.
const (
	statsJob     = "stats"
	retentionJob = "retention"
	evictionJob  = "eviction"
)

// errSkipped ends a job transaction whose lock another broker holds.
var errSkipped = fmt.Errorf("store: skipped: another broker holds the lock")

// withJobLock runs fn in a transaction holding the schema's advisory lock of job; ran is false (and fn
// not called) when another broker holds it.
func (s *Store) withJobLock(ctx context.Context, job string, fn func(pgx.Tx) error) (ran bool, err error) {
	err = s.withTx(ctx, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, q("JobTryLock"), job).Scan(&ok); err != nil {
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
// Only this table: vacuuming partitions or partition_consumers right after a large queue's deletion
// re-plans statements that still depend on their row counts (Known issue 5). A vacuum of this table once
// a deleted queue emptied it leaves statistics of an empty table too, from which the push planned its
// read of the pending-work rows as a walk of the whole line index; AnalyzeOutgrown replaces such plans
// once the table has grown again (Known issue 18).
func (j Jobs) VacuumPending(ctx context.Context, minDead int64) (bool, error) {
	s := j.s
	var due bool
	if err := s.pool.QueryRow(ctx, q("PendingDeadRows"), minDead).Scan(&due); err != nil {
		return false, fmt.Errorf("store: vacuum pending_partitions: %w", interpret(err))
	}
	if !due {
		return false, nil
	}
	// The simple protocol: VACUUM must run outside any transaction block and gains nothing from a
	// prepared statement. So it cannot follow the settings of transaction pooling (pooling.go): the
	// table is named with its schema.
	table := pgx.Identifier{s.schema, "pending_partitions"}.Sanitize()
	if _, err := s.pool.Exec(ctx, fmt.Sprintf(q("VacuumPendingPartitions"), table), pgx.QueryExecModeSimpleProtocol); err != nil {
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
func (j Jobs) PendingLineSample(ctx context.Context) (l PendingLine, ok bool, err error) {
	s := j.s
	err = s.pool.QueryRow(ctx, q("PendingLineSample")).Scan(&l.Scans, &l.Entries, &l.Pages, &l.IndexPages)
	if errors.Is(err, pgx.ErrNoRows) {
		return PendingLine{}, false, nil
	}
	if err != nil {
		return PendingLine{}, false, fmt.Errorf("store: sample pending_partitions: %w", interpret(err))
	}
	return l, true, nil
}

// statisticsTables are the tables the hot statements read, whose generic plans follow their statistics.
var statisticsTables = []string{"messages", "partition_consumers", "partitions", "pending_partitions", "redeliveries"}

// AnalyzeOutgrown analyzes those of the hot tables whose live rows number at least minRows and at
// least factor times what their statistics say, while their statistics count fewer than settled
// rows, and returns their names. A connection keeps the generic plan of a hot statement until the
// next ANALYZE of a table it reads, and a plan built while the statistics said a table was empty
// (after a VACUUM of a table a deleted queue emptied) costs a scan of a whole index the same as a
// key lookup: the push's read of a partition's pending-work rows then walked every row of
// pending_partitions (docs/performance.md, Known issue 18). Autoanalyze gets there too, but up to
// its naptime (a minute by default) later, or after a vacuum of a large table that holds its worker
// for longer. Each ANALYZE re-plans the statements that read the table, on every connection: the
// factor keeps them few while a table grows, and settled ends them once the statistics are no
// longer those of a nearly empty table, leaving the rest to autoanalyze.
func (j Jobs) AnalyzeOutgrown(ctx context.Context, minRows int64, factor, settled float64) ([]string, error) {
	s := j.s
	names, err := collect(ctx, s, "StatisticsOutgrown", scanOne[string], statisticsTables, minRows, factor, settled)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, err := s.pool.Exec(ctx, fmt.Sprintf(q("AnalyzeTable"), pgx.Identifier{n}.Sanitize())); err != nil {
			return nil, fmt.Errorf("store: analyze %s: %w", n, interpret(err))
		}
	}
	return names, nil
}
