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
	now, lock := named["MessageInsert"], named["PartitionLock"]
	cur := beforeInsert
	if now == "" || lock == "" {
		return fmt.Errorf("push.sql: MessageInsert or PartitionLock not found")
	}
	cfg, err := pgxpool.ParseConfig(pgURL)
	if err != nil {
		return err
	}
	cfg.MaxConns = 32
	cfg.ConnConfig.RuntimeParams["search_path"] = o.schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
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
		kind          string // "current" (PartitionLock + statement), "plain" (VALUES, no lock)
		sql           string
		workers, rows int
	}
	vs := []variant{
		{"before", "current", cur, 4, 1000},
		{"before w8 m400", "current", cur, 8, 400},
		{"before w16 m100", "current", cur, 16, 100},
		{"before, no ON CONFLICT", "current", noConflict, 4, 1000},
		{"before, no pending_partitions", "current", noPending, 4, 1000},
		{"before, no DISTINCT/window/RETURNING", "current", noReturn, 4, 1000},
		{"numbered by broker, no dedup at all", "lean", leanInsert, 4, 1000},
		{"MessageInsert now, client ids", "now", now, 4, 1000},
		{"MessageInsert now, client ids w8 m400", "now", now, 8, 400},
		{"MessageInsert now, client ids w16 m100", "now", now, 16, 100},
		{"MessageInsert now, minted ids", "now-minted", now, 4, 1000},
		{"plain INSERT messages w16 m100", "plain", "", 16, 100},
		{"plain INSERT messages w4 m1000", "plain", "", 4, 1000},
	}
	fmt.Fprintf(w, "\n== push statement variants: %d partitions, %s each, durable=%v ==\n", x.parts, x.d, true)
	fmt.Fprintf(w, "%-40s %8s %6s %10s %12s %10s\n", "variant", "workers", "rows", "rows/s", "pg µs/row", "p50 ms")
	// The foreign key messages -> partitions is measured both ways, whatever the schema has; the schema
	// is left as it was.
	const addFK = `ALTER TABLE messages ADD CONSTRAINT messages_partition_id_fkey FOREIGN KEY (partition_id) REFERENCES partitions(id) ON DELETE CASCADE`
	var hadFK bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'messages_partition_id_fkey')`).Scan(&hadFK); err != nil {
		return err
	}
	if !hadFK {
		if _, err := pool.Exec(ctx, addFK); err != nil {
			return err
		}
	}
	for _, fk := range []bool{true, false} {
		if !fk {
			if _, err := pool.Exec(ctx, `ALTER TABLE messages DROP CONSTRAINT messages_partition_id_fkey`); err != nil {
				return err
			}
			fmt.Fprintln(w, "-- without the foreign key messages -> partitions:")
		}
		for _, v := range vs {
			if !fk && v.workers != 4 && v.kind != "plain" {
				continue
			}
			r, err := x.run(ctx, v.kind, v.sql, lock, v.workers, v.rows)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			fmt.Fprintf(w, "%-40s %8d %6d %10.0f %12.2f %10.2f\n", v.name, v.workers, v.rows, r.rate, r.pgPerRow, r.p50)
		}
	}
	if hadFK {
		_, err = pool.Exec(ctx, addFK)
	}
	return err
}

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
    FROM bump b
    JOIN queues q ON q.id = b.queue_id
    CROSS JOIN LATERAL (
        SELECT $11::text AS consumer_group
        UNION ALL
        SELECT s.consumer_group FROM consumer_group_subscriptions s WHERE s.queue_id = b.queue_id AND s.consumer_group <> $11::text
    ) g
    ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
)
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
	if _, err := x.pool.Exec(ctx, `DELETE FROM messages WHERE partition_id = ANY($1::uuid[])`, x.pids); err != nil {
		return pushSQLResult{}, err
	}
	_, _ = x.pool.Exec(ctx, `VACUUM messages`)
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
		var sb strings.Builder
		args := make([]any, 0, merge*5)
		sb.WriteString("INSERT INTO messages (partition_id, seq, id, transaction_id, payload, created_at) VALUES ")
		for i := range merge {
			if i > 0 {
				sb.WriteByte(',')
			}
			k := i * 5
			fmt.Fprintf(&sb, "($%d,$%d,$%d,$%d,$%d::jsonb,clock_timestamp())", k+1, k+2, k+3, k+4, k+5)
			args = append(args, pids[i], base+int64(i)+1, ids[i], txids[i], string(payloads[i]))
		}
		_, err := x.pool.Exec(ctx, sb.String(), args...)
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
