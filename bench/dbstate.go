package main

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// RelationIO is one table's or index's share of the buffer accesses of a window
// (pg_statio_user_tables / pg_statio_user_indexes deltas), with the autovacuum work done on it meanwhile.
type RelationIO struct {
	Name        string `json:"name"`
	Blocks      int64  `json:"blocks"`      // hit + read during the window
	Read        int64  `json:"blocks_read"` // of which not in shared buffers
	DeadAtStart int64  `json:"dead_tuples_at_start,omitempty"`
	Autovacuums int64  `json:"autovacuums,omitempty"`
	Autoanalyze int64  `json:"autoanalyzes,omitempty"`
}

type relCounters struct {
	blocks, read, dead, vacuums, analyzes int64
}

// relationSnapshot reads the cumulative block counters of every relation of the database, and for
// tables their dead tuples and autovacuum counts. Statistics are flushed by each backend at the end of
// its transaction (at most once a second when busy), so a window's deltas are exact to about a second.
func (r *runner) relationSnapshot(ctx context.Context) map[string]relCounters {
	if !r.pgStats {
		return nil
	}
	rows, err := r.db.pool.Query(ctx, `
		SELECT t.schemaname || '.' || t.relname,
		       coalesce(t.heap_blks_hit, 0) + coalesce(t.heap_blks_read, 0) + coalesce(t.toast_blks_hit, 0) + coalesce(t.toast_blks_read, 0),
		       coalesce(t.heap_blks_read, 0) + coalesce(t.toast_blks_read, 0),
		       s.n_dead_tup, s.autovacuum_count, s.autoanalyze_count
		FROM pg_statio_user_tables t JOIN pg_stat_user_tables s USING (relid)
		UNION ALL
		SELECT i.schemaname || '.' || i.indexrelname, coalesce(i.idx_blks_hit, 0) + coalesce(i.idx_blks_read, 0),
		       coalesce(i.idx_blks_read, 0), 0, 0, 0
		FROM pg_statio_user_indexes i`)
	if err != nil {
		fmt.Fprintf(r.out, "relation statistics: %v\n", err)
		return nil
	}
	defer rows.Close()
	out := map[string]relCounters{}
	for rows.Next() {
		var name string
		var c relCounters
		if err := rows.Scan(&name, &c.blocks, &c.read, &c.dead, &c.vacuums, &c.analyzes); err != nil {
			return nil
		}
		out[name] = c
	}
	return out
}

// relationIO prints and returns the relations with the most buffer accesses since before.
func (r *runner) relationIO(ctx context.Context, before map[string]relCounters) []RelationIO {
	if before == nil {
		return nil
	}
	after := r.relationSnapshot(ctx)
	var out []RelationIO
	for name, a := range after {
		b := before[name]
		rio := RelationIO{Name: name, Blocks: a.blocks - b.blocks, Read: a.read - b.read, DeadAtStart: b.dead,
			Autovacuums: a.vacuums - b.vacuums, Autoanalyze: a.analyzes - b.analyzes}
		if rio.Blocks > 0 || rio.Autovacuums > 0 {
			out = append(out, rio)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Blocks > out[j].Blocks })
	if len(out) > 10 {
		out = out[:10]
	}
	fmt.Fprintln(r.out, "top relations (pg_statio, window): blocks | read | dead tuples at start | autovacuums | autoanalyzes | relation")
	for _, x := range out {
		fmt.Fprintf(r.out, "  %10d | %7d | %8d | %d | %d | %s\n", x.Blocks, x.Read, x.DeadAtStart, x.Autovacuums, x.Autoanalyze, x.Name)
	}
	return out
}

// vacuumDatabase runs a plain VACUUM of the broker's whole database: the state autovacuum leaves once
// it has reached the dead rows of the deleted queues (-vacuum-between). Left to autovacuum, those rows
// were still there when the next windows ran, and cost them: fanout-g10's PostgreSQL CPU per message
// followed the dead rows of messages at its start (issue 14, docs/performance.md).
func (r *runner) vacuumDatabase(ctx context.Context) {
	if r.db == nil {
		return
	}
	start := time.Now()
	if _, err := r.db.pool.Exec(ctx, `VACUUM`); err != nil {
		fmt.Fprintf(r.out, "-vacuum-between: %v\n", err)
		return
	}
	fmt.Fprintf(r.out, "-vacuum-between: VACUUM of the database took %v\n", time.Since(start).Round(10*time.Millisecond))
}

// checkpoint writes a checkpoint before a measured window (-checkpoint), so that every window starts
// right after one: the full-page images of first page changes then fall alike on the broker's windows
// and the baseline's, instead of on whichever a checkpoint happened to start in. With -compare the other
// target's database is checkpointed as well: its last window, drain and VACUUM leave dirty pages that
// its checkpointer and the kernel would otherwise write out during this window, on the same disk. A
// failure (no privilege on a remote database) is reported once and ends that database's checkpoints.
func (r *runner) checkpoint(ctx context.Context) {
	if !r.opt.checkpoint {
		return
	}
	for _, x := range append([]*runner{r}, r.peers...) {
		if x.db == nil || x.noCheckpoint {
			continue
		}
		if _, err := x.db.pool.Exec(ctx, `CHECKPOINT`); err != nil {
			x.noCheckpoint = true
			fmt.Fprintf(r.out, "[%s] CHECKPOINT failed, windows run without one: %v\n", x.label, err)
		}
	}
}
