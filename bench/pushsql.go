package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pushSQL times variants of the broker's push statement directly against the broker's database, without
// HTTP or the broker, to find where PostgreSQL's time per pushed row goes (issue 14). Every variant runs
// workers concurrent transactions, each storing merge rows spread over the worker's own partitions in
// requests of 100 (as the push coalescer shards and merges them), for -push-sql-duration; it reports rows/s
// and PostgreSQL CPU per row. The broker must be idle meanwhile (it is: no scenario runs).
func pushSQL(ctx context.Context, o options, pgURL string, pgPID int, w io.Writer) error {
	raw, err := os.ReadFile(filepath.Join(o.repo, "internal/store/queries/push.sql"))
	if err != nil {
		return err
	}
	named := splitNamed(string(raw))
	now, lock, bump := priorInsert, named["PartitionLock"], named["PartitionBump"]
	cur := beforeInsert
	if lock == "" || bump == "" {
		return fmt.Errorf("push.sql: PartitionLock or PartitionBump not found")
	}
	pool, err := newPool(ctx, pgURL, 32, o.schema)
	if err != nil {
		return err
	}
	defer pool.Close()
	x := &pushSQLRun{pool: pool, pgPID: pgPID, d: o.pushSQLDuration, parts: o.partitions, w: w}
	if err := x.setup(ctx); err != nil {
		return fmt.Errorf("push-sql setup (is %q the broker's schema?): %w", o.schema, err)
	}
	defer x.teardown(context.WithoutCancel(ctx))

	noConflict := strings.Replace(cur, "    ON CONFLICT (partition_id, transaction_id) DO NOTHING\n", "", 1)
	noPending := cutPending(cur)
	noReturn := noReturning(cur)
	type variant struct {
		name          string
		kind          string // how once runs it
		sql           string
		workers, rows int
	}
	vs := []variant{
		{"before", "current", cur, 4, 1000},
		{"before, no ON CONFLICT", "current", noConflict, 4, 1000},
		{"before, no pending_partitions", "current", noPending, 4, 1000},
		{"before, no DISTINCT/window/RETURNING", "current", noReturn, 4, 1000},
		{"numbered by broker, no dedup at all", "lean", leanInsert, 4, 1000},
		{"one statement, client ids", "now", now, 4, 1000},
		{"one statement, client ids w8 m400", "now", now, 8, 400},
		{"one statement, client ids w16 m100", "now", now, 16, 100},
		{"one statement, minted ids", "now-minted", now, 4, 1000},
		{"bump+COPY, lookups (Tx.Push)", "copy", bump, 4, 1000},
		{"bump+COPY, no lookup (Store.Push)", "copy-minted", bump, 4, 1000},
		{"bump+COPY, no lookup (Store.Push) w8 m400", "copy-minted", bump, 8, 400},
		{"bump+COPY, no lookup (Store.Push) w16 m100", "copy-minted", bump, 16, 100},
		{"bump, then INSERT unnest, lookups", "two-step", bump, 4, 1000},
		{"bump, then INSERT unnest, no lookup", "two-step-minted", bump, 4, 1000},
		{"plain COPY messages w16 m100", "plain-copy", "", 16, 100},
		{"plain COPY messages w4 m1000", "plain-copy", "", 4, 1000},
		{"plain INSERT messages w16 m100", "plain", "", 16, 100},
		{"plain INSERT messages w4 m1000", "plain", "", 4, 1000},
	}
	fmt.Fprintf(w, "\n== push statement variants: %d partitions, %s each, durable=%v ==\n", x.parts, x.d, true)
	fmt.Fprintf(w, "%-44s %8s %6s %10s %12s %10s\n", "variant", "workers", "rows", "rows/s", "pg µs/row", "p50 ms")
	for _, v := range vs {
		if !selected(v.name, o.pushSQLOnly) {
			continue
		}
		r, err := x.run(ctx, v.kind, v.sql, lock, v.workers, v.rows)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		fmt.Fprintf(w, "%-44s %8d %6d %10.0f %12.2f %10.2f\n", v.name, v.workers, v.rows, r.rate, r.pgPerRow, r.p50)
	}
	return nil
}

// selected says whether name contains one of the comma-separated parts of only (all when only is empty).
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, part := range strings.Split(only, ",") {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}

// copyColumns are the columns the COPY variants store.
var copyColumns = []string{"partition_id", "seq", "id", "transaction_id", "trace_id", "payload", "producer_sub", "is_encrypted", "created_at"}

// pendFromBump ends the pend CTE of priorInsert and leanInsert (after their SELECT list, which differs
// in ready_at): one pending_partitions row per partition bumped, for the queue-mode group ($11) and every
// group subscribed to its queue; an existing row keeps its place in line.
const pendFromBump = `    FROM bump b
    JOIN queues q ON q.id = b.queue_id
    CROSS JOIN LATERAL (
        SELECT $11::text AS consumer_group
        UNION ALL
        SELECT s.consumer_group FROM consumer_group_subscriptions s WHERE s.queue_id = b.queue_id AND s.consumer_group <> $11::text
    ) g
    ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
`

// priorInsert is MessageInsert as it was before the COPY (one statement: probe, bump, insert from
// unnest, pending rows), kept to compare against.
const priorInsert = `WITH input AS MATERIALIZED (
    SELECT t.*, d.hit IS NOT NULL AS dup
    FROM unnest($1::int[], $2::uuid[], $3::int[], $4::text[], $5::uuid[], $6::uuid[], $7::jsonb[], $8::text[], $9::bool[], $10::bool[])
        AS t(idx, partition_id, k, transaction_id, id, trace_id, payload, producer_sub, is_encrypted, probe)
    LEFT JOIN LATERAL (
        SELECT 1 AS hit FROM messages m
        WHERE t.probe AND m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
        LIMIT 1
    ) d ON true
), counts AS (
    SELECT partition_id, max(k) AS top, count(*) AS n FROM input WHERE NOT dup GROUP BY partition_id
), bump AS (
    UPDATE partitions p SET last_seq = p.last_seq + c.top, last_push_at = coalesce($12::timestamptz, clock_timestamp()), message_count = p.message_count + c.n
    FROM counts c
    WHERE p.id = c.partition_id
    RETURNING p.id, p.queue_id, p.last_seq - c.top AS base, p.last_push_at AS at
), ins AS (
    INSERT INTO messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at)
    SELECT i.partition_id, b.base + i.k, i.id, i.transaction_id, i.trace_id, i.payload, i.producer_sub, i.is_encrypted, b.at
    FROM input i JOIN bump b ON b.id = i.partition_id
    WHERE NOT i.dup
), pend AS (
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT b.id, g.consumer_group, b.queue_id, coalesce($12::timestamptz, now()) + make_interval(secs => q.delayed_processing)
` + pendFromBump + `)
SELECT i.idx FROM input i WHERE i.dup OR NOT EXISTS (SELECT 1 FROM bump b WHERE b.id = i.partition_id)
`

// beforeInsert is MessageInsert as it was before this experiment (ON CONFLICT, numbering by a window
// function, RETURNING joined back to the input), kept to compare against.
const beforeInsert = `WITH input AS (
    SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::uuid[], $5::uuid[], $6::jsonb[], $7::text[], $8::bool[])
        AS t(idx, partition_id, transaction_id, id, trace_id, payload, producer_sub, is_encrypted)
), firsts AS (
    SELECT DISTINCT ON (partition_id, transaction_id) *
    FROM input
    ORDER BY partition_id, transaction_id, idx
), numbered AS (
    SELECT f.*, p.last_seq + row_number() OVER (PARTITION BY f.partition_id ORDER BY f.idx) AS seq
    FROM firsts f JOIN partitions p ON p.id = f.partition_id
), ins AS (
    INSERT INTO messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at)
    SELECT partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, clock_timestamp()
    FROM numbered
    ORDER BY partition_id, seq
    ON CONFLICT (partition_id, transaction_id) DO NOTHING
    RETURNING partition_id, seq, created_at
), bump AS (
    UPDATE partitions p SET last_seq = m.max_seq, last_push_at = m.max_at, message_count = p.message_count + m.n
    FROM (SELECT partition_id, max(seq) AS max_seq, max(created_at) AS max_at, count(*) AS n
          FROM ins GROUP BY partition_id) m
    WHERE p.id = m.partition_id
), pend AS (
    -- The partitions that received messages have work for the queue-mode group ($9) and every group
    -- subscribed to their queue (0006_pending_partitions.sql). An existing row keeps its place in line
    -- and is not locked.
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT t.partition_id, g.consumer_group, p.queue_id, now() + make_interval(secs => q.delayed_processing)
    FROM (SELECT DISTINCT partition_id FROM ins) t
    JOIN partitions p ON p.id = t.partition_id
    JOIN queues q ON q.id = p.queue_id
    CROSS JOIN LATERAL (
        SELECT $9::text AS consumer_group
        UNION ALL
        SELECT s.consumer_group FROM consumer_group_subscriptions s WHERE s.queue_id = p.queue_id AND s.consumer_group <> $9::text
    ) g
    ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
)
SELECT n.idx FROM ins JOIN numbered n ON n.partition_id = ins.partition_id AND n.seq = ins.seq`

// leanInsert numbers rows in the broker ($4 = the row's ordinal among its partition's rows) and bumps each
// partition once ($1 ids, $2 row counts), with no per-row sort, window, dedup or RETURNING.
const leanInsert = `WITH bump AS (
    UPDATE partitions p SET last_seq = p.last_seq + v.n, last_push_at = clock_timestamp(), message_count = p.message_count + v.n
    FROM unnest($1::uuid[], $2::int[]) AS v(id, n)
    WHERE p.id = v.id
    RETURNING p.id, p.queue_id, p.last_seq - v.n AS base, p.last_push_at AS at
), pend AS (
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT b.id, g.consumer_group, b.queue_id, now() + make_interval(secs => q.delayed_processing)
` + pendFromBump + `)
INSERT INTO messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at)
SELECT t.partition_id, b.base + t.k, t.id, t.transaction_id, t.trace_id, t.payload, t.producer_sub, t.is_encrypted, b.at
FROM unnest($3::uuid[], $4::int[], $5::text[], $6::uuid[], $7::uuid[], $8::jsonb[], $9::text[], $10::bool[])
    AS t(partition_id, k, transaction_id, id, trace_id, payload, producer_sub, is_encrypted)
JOIN bump b ON b.id = t.partition_id`

func splitNamed(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, "-- name: ")[1:] {
		name, _, _ := strings.Cut(part, " ")
		var body []string
		for _, l := range strings.Split(part, "\n")[1:] {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				body = append(body, l)
			}
		}
		out[name] = strings.TrimSpace(strings.Join(body, "\n"))
	}
	return out
}

// cutPending drops the pend CTE of MessageInsert.
func cutPending(s string) string {
	i := strings.Index(s, "), pend AS (")
	j := strings.Index(s, "\n)\nSELECT n.idx")
	if i < 0 || j < 0 {
		return s
	}
	return s[:i] + s[j+1:]
}

// noReturning numbers with the window function but keeps no DISTINCT ON and returns nothing.
func noReturning(s string) string {
	s = strings.Replace(s, "SELECT DISTINCT ON (partition_id, transaction_id) *\n    FROM input\n    ORDER BY partition_id, transaction_id, idx", "SELECT * FROM input", 1)
	s = strings.Replace(s, "SELECT n.idx FROM ins JOIN numbered n ON n.partition_id = ins.partition_id AND n.seq = ins.seq", "SELECT count(*) FROM ins", 1)
	return s
}

type pushSQLRun struct {
	pool    *pgxpool.Pool
	pgPID   int
	d       time.Duration
	parts   int
	w       io.Writer
	queueID uuid.UUID
	pids    []uuid.UUID
	ctr     atomic.Int64
}

func (x *pushSQLRun) setup(ctx context.Context) error {
	x.queueID = uuid.New()
	if _, err := x.pool.Exec(ctx, `INSERT INTO queues (id, name) VALUES ($1, 'bench-push-sql')`, x.queueID); err != nil {
		return err
	}
	for i := range x.parts {
		id := uuid.New()
		if _, err := x.pool.Exec(ctx, `INSERT INTO partitions (id, queue_id, name) VALUES ($1, $2, $3)`, id, x.queueID, fmt.Sprintf("p%d", i)); err != nil {
			return err
		}
		x.pids = append(x.pids, id)
	}
	return nil
}

func (x *pushSQLRun) teardown(ctx context.Context) {
	_, _ = x.pool.Exec(ctx, `DELETE FROM queues WHERE id = $1`, x.queueID)
}

type pushSQLResult struct{ rate, pgPerRow, p50 float64 }

func (x *pushSQLRun) run(ctx context.Context, kind, stmt, lock string, workers, merge int) (pushSQLResult, error) {
	// Every variant starts from the same empty table when messages holds only this experiment's rows
	// (the bench's private database): after a DELETE and VACUUM the inserts would go to the freed space
	// all over the table, which costs more and differently each time (docs/performance.md, Known issues).
	var others bool
	if err := x.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE partition_id <> ALL($1::uuid[]))`, x.pids).Scan(&others); err != nil {
		return pushSQLResult{}, err
	}
	if !others {
		if _, err := x.pool.Exec(ctx, `TRUNCATE messages CASCADE`); err != nil {
			return pushSQLResult{}, err
		}
	} else {
		if _, err := x.pool.Exec(ctx, `DELETE FROM messages WHERE partition_id = ANY($1::uuid[])`, x.pids); err != nil {
			return pushSQLResult{}, err
		}
		_, _ = x.pool.Exec(ctx, `VACUUM messages`)
	}
	_, _ = x.pool.Exec(ctx, `CHECKPOINT`)
	payload := payloadOf(28)
	// A worker's partitions: those the push coalescer's shard function would give it.
	mine := make([][]uuid.UUID, workers)
	for wk := range workers {
		for i, p := range x.pids {
			if i%workers == wk {
				mine[wk] = append(mine[wk], p)
			}
		}
		if len(mine[wk]) == 0 { // more workers than partitions: two workers share one
			mine[wk] = []uuid.UUID{x.pids[wk%len(x.pids)]}
		}
	}
	pg0 := treeCPU(x.pgPID)
	run, err := timed(workers, x.d, func(wk, n int) func() (int, error) {
		return func() (int, error) {
			return merge, x.once(ctx, kind, stmt, lock, mine[wk], n, merge, payload)
		}
	})
	if err != nil {
		return pushSQLResult{}, err
	}
	el := run.elapsed
	pg := treeCPU(x.pgPID) - pg0
	n := float64(run.rows)
	return pushSQLResult{rate: n / el.Seconds(), pgPerRow: float64(pg.Microseconds()) / n, p50: run.latency.P50}, nil
}

// once stores merge rows: requests of 100 rows, each to the next of the worker's partitions.
func (x *pushSQLRun) once(ctx context.Context, kind, stmt, lock string, mine []uuid.UUID, n, merge int, payload []byte) error {
	idx := make([]int32, merge)
	pids := make([]uuid.UUID, merge)
	txids := make([]string, merge)
	ids := make([]uuid.UUID, merge)
	traces := make([]pgtype.UUID, merge)
	payloads := make([][]byte, merge)
	subs := make([]pgtype.Text, merge)
	enc := make([]bool, merge)
	ks := make([]int32, merge)
	counts := map[uuid.UUID]int32{}
	var order []uuid.UUID
	base := x.ctr.Add(int64(merge)) - int64(merge)
	for i := range merge {
		p := mine[(n*(merge/100+1)+i/100)%len(mine)]
		if _, ok := counts[p]; !ok {
			order = append(order, p)
		}
		counts[p]++
		idx[i], pids[i], ks[i] = int32(i), p, counts[p]
		txids[i] = fmt.Sprintf("sql-%d", base+int64(i))
		ids[i] = uuid.Must(uuid.NewV7())
		payloads[i] = payload
	}
	b := &pgx.Batch{}
	switch kind {
	case "plain":
		args := make([]any, 0, merge*5)
		for i := range merge {
			args = append(args, pids[i], base+int64(i)+1, ids[i], txids[i], string(payloads[i]))
		}
		sql := multiRowInsert("INSERT INTO messages (partition_id, seq, id, transaction_id, payload, created_at)", merge, ",clock_timestamp()")
		_, err := x.pool.Exec(ctx, sql, args...)
		return err
	case "current":
		b.Queue("BEGIN")
		b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
		b.Queue(lock, order)
		args := []any{idx, pids, txids, ids, traces, payloads, subs, enc, "__QUEUE_MODE__"}
		if !strings.Contains(stmt, "$9") {
			args = args[:8]
		}
		b.Queue(stmt, args...)
		b.Queue("COMMIT")
	case "now", "now-minted":
		probe := make([]bool, merge)
		for i := range probe {
			probe[i] = kind == "now"
		}
		b.Queue("BEGIN")
		b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)")
		b.Queue(lock, order)
		b.Queue(stmt, idx, pids, ks, txids, ids, traces, payloads, subs, enc, probe, "__QUEUE_MODE__", pgtype.Timestamptz{})
		b.Queue("COMMIT")
	case "plain-copy":
		at := time.Now()
		_, err := x.pool.CopyFrom(ctx, pgx.Identifier{"messages"}, copyColumns, pgx.CopyFromSlice(merge, func(i int) ([]any, error) {
			return []any{pgtype.UUID{Bytes: pids[i], Valid: true}, base + int64(i) + 1, pgtype.UUID{Bytes: ids[i], Valid: true}, txids[i], traces[i], payloads[i], subs[i], enc[i], at}, nil
		}))
		return err
	case "copy", "copy-minted", "two-step", "two-step-minted":
		return x.bumpAndStore(ctx, kind, stmt, lock, order, counts, idx, pids, ks, txids, ids, payloads)
	case "lean":
		ns := make([]int32, len(order))
		for i, p := range order {
			ns[i] = counts[p]
		}
		b.Queue("BEGIN")
		b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
		b.Queue(lock, order)
		b.Queue(stmt, order, ns, pids, ks, txids, ids, traces, payloads, subs, enc, "__QUEUE_MODE__")
		b.Queue("COMMIT")
	}
	return x.pool.SendBatch(ctx, b).Close()
}

// bumpAndStore runs one push as the COPY variants do: [BEGIN, settings, PartitionLock, bump] in one
// round trip, then the rows of the bumped partitions minus the stored transactionIds, numbered from
// each partition's base, by COPY and a COMMIT (kind "copy"), or by a plain INSERT from unnest pipelined
// with the COMMIT (kind "two-step").
func (x *pushSQLRun) bumpAndStore(ctx context.Context, kind, bump, lock string, order []uuid.UUID, counts map[uuid.UUID]int32,
	idx []int32, pids []uuid.UUID, ks []int32, txids []string, ids []uuid.UUID, payloads [][]byte) error {
	c, err := x.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	ns := make([]int32, len(order))
	for i, p := range order {
		ns[i] = counts[p]
	}
	var pIdx, pK []int32
	var pPid []uuid.UUID
	var pTx []string
	if !strings.HasSuffix(kind, "-minted") {
		pIdx, pPid, pK, pTx = idx, pids, ks, txids
	}
	type bumped struct {
		base int64
		at   time.Time
	}
	got := map[uuid.UUID]bumped{}
	dups := map[int32]bool{}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)")
	b.Queue(lock, order)
	b.Queue(bump, order, ns, pIdx, pPid, pK, pTx, "__QUEUE_MODE__", pgtype.Timestamptz{}).Query(func(rs pgx.Rows) error {
		for rs.Next() {
			var id pgtype.UUID
			var base pgtype.Int8
			var at pgtype.Timestamptz
			var i pgtype.Int4
			if err := rs.Scan(&id, &base, &at, &i); err != nil {
				return err
			}
			if i.Valid {
				dups[i.Int32] = true
			} else {
				got[id.Bytes] = bumped{base.Int64, at.Time}
			}
		}
		return rs.Err()
	})
	fail := func(err error) error {
		_, _ = c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return fail(err)
	}
	var keep []int
	for i := range idx {
		if _, ok := got[pids[i]]; ok && !dups[int32(i)] {
			keep = append(keep, i)
		}
	}
	if strings.HasPrefix(kind, "two-step") {
		n := len(keep)
		ps, seqs, is, ts, pl, ats := make([]pgtype.UUID, n), make([]int64, n), make([]pgtype.UUID, n), make([]string, n), make([][]byte, n), make([]time.Time, n)
		for j, i := range keep {
			g := got[pids[i]]
			ps[j], seqs[j], is[j], ts[j], pl[j], ats[j] = pgtype.UUID{Bytes: pids[i], Valid: true}, g.base+int64(ks[i]), pgtype.UUID{Bytes: ids[i], Valid: true}, txids[i], payloads[i], g.at
		}
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO messages (partition_id, seq, id, transaction_id, payload, created_at)
SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::text[], $5::jsonb[], $6::timestamptz[])`, ps, seqs, is, ts, pl, ats)
		b.Queue("COMMIT")
		if err := c.SendBatch(ctx, b).Close(); err != nil {
			return fail(err)
		}
		return nil
	}
	var noTrace pgtype.UUID
	var noSub pgtype.Text
	_, err = c.CopyFrom(ctx, pgx.Identifier{"messages"}, copyColumns, pgx.CopyFromSlice(len(keep), func(j int) ([]any, error) {
		i := keep[j]
		g := got[pids[i]]
		return []any{pgtype.UUID{Bytes: pids[i], Valid: true}, g.base + int64(ks[i]), pgtype.UUID{Bytes: ids[i], Valid: true}, txids[i], noTrace, payloads[i], noSub, false, g.at}, nil
	}))
	if err != nil {
		return fail(err)
	}
	_, err = c.Exec(ctx, "COMMIT")
	return err
}
