package main

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/queen-go/queen/internal/store"
)

// explainPop shows what one wildcard pop costs as the queue grows: for each -partition-counts n it
// builds a queue of n partitions in the broker's schema in which every partition has one message
// waiting (the worst case for a pop that scans partitions) and 16 of them (half of 10) are leased, then
// prints EXPLAIN (ANALYZE, BUFFERS) of the Pop statement (the variant of internal/store/queries/pop.sql
// that a wildcard pop of one partition without autoAck runs) as the generic plan the broker's prepared
// statement runs, with the session settings of the broker's pop connections (store.HotSessionParams),
// inside a transaction that is rolled back. The text is the one compiled into this program.
func explainPop(ctx context.Context, o options, pgURL string, w io.Writer) error {
	popSQL := store.PopText(store.PopParams{MaxPartitions: 1, Batch: 10})
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if o.brokerBin != "" || o.url != "" {
		// The text comes from the store package compiled into this program.
		fmt.Fprintln(w, "note: the Pop statement explained is this bench build's, which may differ from the broker's under test")
	}
	if _, err := conn.Exec(ctx, "SET search_path = "+pgx.Identifier{o.schema}.Sanitize()); err != nil {
		return err
	}
	for _, n := range o.partitionCounts {
		q := fmt.Sprintf("bench-explain-%d", n)
		if _, err := conn.Exec(ctx, explainSetup, q, n); err != nil {
			return fmt.Errorf("explain setup (is %q the broker's schema?): %w", o.schema, err)
		}
		if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n== EXPLAIN pop: queue of %d partitions, every one with a message waiting, min(16, n/2) leased; wildcard pop batch=10 ==\n", n)
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		var stmts []string
		for k, v := range store.HotSessionParams() {
			stmts = append(stmts, "SET LOCAL "+k+" = "+v)
		}
		stmts = append(stmts, "PREPARE explain_pop(text, text, text, int, int, uuid, bool, timestamptz) AS "+popSQL)
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				_ = tx.Rollback(ctx)
				return fmt.Errorf("explain: %w", err)
			}
		}
		// A utility statement takes no bind parameters: the (fixed, harmless) names go in as literals.
		rows, err := tx.Query(ctx, fmt.Sprintf("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE explain_pop('%s', '__QUEUE_MODE__', NULL, 1, 10, gen_random_uuid(), false, NULL)", q))
		if err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				_ = tx.Rollback(ctx)
				return err
			}
			fmt.Fprintln(w, line)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			_ = tx.Rollback(ctx)
			return fmt.Errorf("explain: %w", err)
		}
		_ = tx.Rollback(ctx)
		if _, err := conn.Exec(ctx, "DEALLOCATE explain_pop"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "DELETE FROM queues WHERE name = $1", q); err != nil {
			return err
		}
	}
	return nil
}

// explainSetup builds queue $1 with $2 partitions: each holds two messages, the queue-mode cursor after
// the first, so each has one message waiting and a pending-work record; min(16, $2/2) of them are leased.
const explainSetup = `
WITH q AS (
    INSERT INTO queues (id, name) VALUES (gen_random_uuid(), $1) RETURNING id
), p AS (
    INSERT INTO partitions (id, queue_id, name, last_seq, last_push_at, message_count)
    SELECT gen_random_uuid(), q.id, 'p' || g, 2, now(), 2 FROM q, generate_series(1, $2::int) g
    RETURNING id, queue_id, name
), m AS (
    INSERT INTO messages (partition_id, seq, id, transaction_id, payload, created_at)
    SELECT p.id, s, gen_random_uuid(), p.name || '-' || s, '"x"', now() FROM p, generate_series(1, 2) s
), c AS (
    INSERT INTO partition_consumers (partition_id, consumer_group, cursor_seq, claim_cursor_seq, lease_id, lease_expires_at, last_claimed_at)
    SELECT p.id, '__QUEUE_MODE__', 1, 1,
           CASE WHEN row_number() OVER () <= least(16, $2::int / 2) THEN gen_random_uuid() END,
           CASE WHEN row_number() OVER () <= least(16, $2::int / 2) THEN now() + interval '5 minutes' END, now()
    FROM p
)
INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
SELECT p.id, '__QUEUE_MODE__', p.queue_id, now() - interval '1 minute' + random() * interval '50 seconds' FROM p`
