package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LeaseSummary counts the live leases.
type LeaseSummary struct {
	Active, Partitions, Messages int64
}

// DLQSummary counts dead letters and their most frequent errors.
type DLQSummary struct {
	Total, Partitions int64
	TopErrors         []ErrorCount
}

// ErrorCount is one error text with how many dead letters carry it.
type ErrorCount struct {
	Error string
	Count int64
}

// Overview reads the live lease and dead-letter summaries.
func (a Analytics) Overview(ctx context.Context) (LeaseSummary, DLQSummary, error) {
	s := a.s
	var l LeaseSummary
	var d DLQSummary
	if err := s.pool.QueryRow(ctx, q("LeaseSummary"), s.now()).Scan(&l.Active, &l.Partitions, &l.Messages); err != nil {
		return l, d, fmt.Errorf("store: leases: %w", interpret(err))
	}
	if err := s.pool.QueryRow(ctx, q("DeadLetterTotals")).Scan(&d.Total, &d.Partitions); err != nil {
		return l, d, fmt.Errorf("store: dlq totals: %w", interpret(err))
	}
	rows, err := s.pool.Query(ctx, q("DeadLetterTopErrors"))
	if err != nil {
		return l, d, fmt.Errorf("store: top errors: %w", interpret(err))
	}
	d.TopErrors, err = collectRows(rows, func(r pgx.Rows) (ErrorCount, error) {
		var e ErrorCount
		err := r.Scan(&e.Error, &e.Count)
		return e, err
	})
	if err != nil {
		return l, d, fmt.Errorf("store: top errors: %w", interpret(err))
	}
	return l, d, nil
}
