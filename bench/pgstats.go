package main

import (
	"context"
	"fmt"
	"strings"
)

// StatementStat is one statement's share of PostgreSQL's time during a window (pg_stat_statements).
type StatementStat struct {
	Query   string  `json:"query"`
	Calls   int64   `json:"calls"`
	TotalMS float64 `json:"total_ms"`
	MeanMS  float64 `json:"mean_ms"`
	PlanMS  float64 `json:"plan_total_ms"` // with pg_stat_statements.track_planning
	Plans   int64   `json:"plans"`
	Rows    int64   `json:"rows"`
	Blocks  int64   `json:"shared_blocks"` // hit + read
}

// StatementTotals sums every statement of a window: unlike times, counts of statements, buffers and WAL
// bytes per message barely move with the load of the host, so they compare builds on a noisy machine.
type StatementTotals struct {
	Calls    int64   `json:"calls"`
	Blocks   int64   `json:"shared_blocks"`
	WALBytes int64   `json:"wal_bytes"`
	ExecMS   float64 `json:"exec_ms"`
}

// enableStatements creates pg_stat_statements if the server preloads it; false when it cannot.
func (b *baseliner) enableStatements(ctx context.Context) bool {
	_, err := b.pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	return err == nil
}

func (r *runner) resetStatements(ctx context.Context) {
	if r.pgStats {
		_, _ = r.db.pool.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	}
}

// topStatements prints and returns the statements that took the most execution time since the reset.
func (r *runner) topStatements(ctx context.Context) []StatementStat {
	if !r.pgStats {
		return nil
	}
	rows, err := r.db.pool.Query(ctx, `
		SELECT query, calls, total_exec_time, mean_exec_time, rows, shared_blks_hit + shared_blks_read,
		       total_plan_time, plans
		FROM pg_stat_statements
		WHERE query NOT LIKE '%pg_stat_statements%'
		ORDER BY total_exec_time + total_plan_time DESC LIMIT 8`)
	if err != nil {
		fmt.Fprintf(r.out, "pg_stat_statements: %v\n", err)
		return nil
	}
	defer rows.Close()
	var out []StatementStat
	for rows.Next() {
		var s StatementStat
		if err := rows.Scan(&s.Query, &s.Calls, &s.TotalMS, &s.MeanMS, &s.Rows, &s.Blocks, &s.PlanMS, &s.Plans); err != nil {
			break
		}
		out = append(out, s)
	}
	var tot StatementTotals
	if err := r.db.pool.QueryRow(ctx, `
		SELECT coalesce(sum(calls), 0)::bigint, coalesce(sum(shared_blks_hit + shared_blks_read), 0)::bigint,
		       coalesce(sum(wal_bytes), 0)::bigint, coalesce(sum(total_exec_time), 0)::float8
		FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'`).Scan(&tot.Calls, &tot.Blocks, &tot.WALBytes, &tot.ExecMS); err == nil {
		r.stmtTotals = tot
	}
	fmt.Fprintln(r.out, "top statements (pg_stat_statements, window): exec ms | calls | mean ms | rows | blocks | plans | plan ms | query")
	for _, s := range out {
		q := strings.Join(strings.Fields(s.Query), " ")
		if len(q) > 110 {
			q = q[:110] + "…"
		}
		fmt.Fprintf(r.out, "  %9.0f | %7d | %7.3f | %8d | %9d | %6d | %7.0f | %s\n", s.TotalMS, s.Calls, s.MeanMS, s.Rows, s.Blocks, s.Plans, s.PlanMS, q)
	}
	return out
}
