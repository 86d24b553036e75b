-- name: Pop :many
-- One statement claims up to $4 partitions of queue $1 for group $2 and reads up to $5 messages (a global
-- budget, in claim order) after each partition's cursor.
--   $3 partition name, NULL for any; $6 lease id; $7 autoAck.
-- Candidates: pending messages for the group (after its cursor, or dead letters retried for it), no live lease, past retry_after, outside the window buffer;
-- least recently claimed first so every partition gets its turn. Contended candidates are skipped
-- (try-lock), never waited on. The upsert takes the lease only if it is still free and the cursor is
-- still the one the messages were read after (claim_cursor_seq); a partition lost to a concurrent pop or
-- ack is simply not returned.
WITH q AS (
    SELECT id, CASE WHEN lease_time > 0 THEN lease_time ELSE 60 END AS lease_time,
           delayed_processing, window_buffer
    FROM queues WHERE name = $1
), cand AS MATERIALIZED (
    SELECT p.id, p.name, coalesce(pc.cursor_seq, 0) AS cursor_seq, coalesce(pc.batch_retry_count, 0) AS retries,
           pc.last_claimed_at
    FROM q
    JOIN partitions p ON p.queue_id = q.id
    LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = $2
    WHERE ($3::text IS NULL OR p.name = $3::text)
      AND (p.last_seq > coalesce(pc.cursor_seq, 0)
           OR EXISTS (SELECT 1 FROM redeliveries r WHERE r.partition_id = p.id AND r.consumer_group = $2))
      AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= now())
      AND (pc.retry_after IS NULL OR pc.retry_after <= now())
      AND (q.window_buffer = 0 OR p.last_push_at <= now() - make_interval(secs => q.window_buffer))
    ORDER BY pc.last_claimed_at NULLS FIRST, p.id
), locked AS (
    SELECT c.*, row_number() OVER () AS claim_order
    FROM (
        SELECT * FROM cand
        WHERE pg_try_advisory_xact_lock(hashtextextended(cand.id::text || '/' || $2, 0))
        LIMIT $4
    ) c
), msgs AS (
    SELECT l.id AS partition_id, l.name AS partition_name, l.cursor_seq, l.retries, l.claim_order,
           m.seq, m.id, m.transaction_id, m.trace_id, m.payload, m.producer_sub, m.is_encrypted, m.created_at
    FROM locked l
    CROSS JOIN q
    CROSS JOIN LATERAL (
        -- Two index range reads, not one OR: an OR with the redeliveries would stop the cursor bound
        -- from limiting the scan of the (partition_id, seq) key, and every pop would read the whole
        -- partition from its first message.
        SELECT * FROM (
            (SELECT m.* FROM messages m
             WHERE m.partition_id = l.id AND m.seq > l.cursor_seq
             ORDER BY m.seq
             LIMIT $5)
            UNION ALL
            (SELECT m.* FROM redeliveries r
             JOIN messages m ON m.partition_id = r.partition_id AND m.seq = r.seq
             WHERE r.partition_id = l.id AND r.consumer_group = $2)
        ) m
        WHERE q.delayed_processing = 0 OR m.created_at <= now() - make_interval(secs => q.delayed_processing)
        ORDER BY m.seq
        LIMIT $5
    ) m
), kept AS (
    SELECT * FROM (
        SELECT msgs.*, row_number() OVER (ORDER BY claim_order, seq) AS rn FROM msgs
    ) x WHERE rn <= $5
), agg AS (
    SELECT partition_id, min(cursor_seq) AS cursor_seq, max(seq) AS upto, count(*) AS cnt FROM kept GROUP BY partition_id
), claimed AS (
    INSERT INTO partition_consumers AS pc
        (partition_id, consumer_group, cursor_seq, claim_cursor_seq, lease_id, lease_expires_at,
         delivered_seq, delivered_count, last_claimed_at, total_consumed, last_consumed_at)
    SELECT a.partition_id, $2,
           CASE WHEN $7 THEN greatest(a.upto, a.cursor_seq) ELSE a.cursor_seq END,
           a.cursor_seq,
           $6,
           CASE WHEN $7 THEN NULL ELSE now() + make_interval(secs => q.lease_time) END,
           a.upto, a.cnt, now(),
           CASE WHEN $7 THEN a.cnt ELSE 0 END,
           CASE WHEN $7 THEN now() END
    FROM agg a CROSS JOIN q
    ORDER BY a.partition_id -- the lock order of acks: concurrent pops and acks cannot deadlock
    ON CONFLICT (partition_id, consumer_group) DO UPDATE SET
        prev_lease_id         = pc.lease_id,
        prev_claim_cursor_seq = pc.claim_cursor_seq,
        prev_delivered_seq    = pc.delivered_seq,
        cursor_seq       = EXCLUDED.cursor_seq,
        claim_cursor_seq = EXCLUDED.claim_cursor_seq,
        lease_id         = EXCLUDED.lease_id,
        lease_expires_at = EXCLUDED.lease_expires_at,
        delivered_seq    = EXCLUDED.delivered_seq,
        delivered_count  = EXCLUDED.delivered_count,
        last_claimed_at  = EXCLUDED.last_claimed_at,
        total_consumed   = pc.total_consumed + EXCLUDED.total_consumed,
        last_consumed_at = coalesce(EXCLUDED.last_consumed_at, pc.last_consumed_at)
    WHERE (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= now())
      AND (pc.retry_after IS NULL OR pc.retry_after <= now())
      AND pc.cursor_seq = EXCLUDED.claim_cursor_seq
    RETURNING partition_id
), redelivered AS (
    -- autoAck consumes retried dead letters at delivery
    DELETE FROM redeliveries r
    USING kept k, claimed c
    WHERE $7 AND c.partition_id = k.partition_id AND r.partition_id = k.partition_id
      AND r.consumer_group = $2 AND r.seq = k.seq
)
SELECT k.partition_id, k.partition_name, k.retries, k.id, k.transaction_id, k.trace_id, k.payload,
       k.producer_sub, k.is_encrypted, k.created_at
FROM kept k JOIN claimed c ON c.partition_id = k.partition_id
ORDER BY k.claim_order, k.seq
