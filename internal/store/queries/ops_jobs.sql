-- name: OpsTryLock :one
-- Transaction-scoped: one broker does each background pass, the others skip it.
SELECT pg_try_advisory_xact_lock($1)

-- name: OpsRefreshQueueStats :exec
-- Rewrites queue_stats for every queue with the same per-partition rules as OpsPartitionCounts.
INSERT INTO queue_stats AS s (queue_id, total, pending, processing, completed, dead_letter, oldest_pending_at, refreshed_at)
SELECT q.id,
       coalesce(sum(c.total), 0),
       coalesce(sum(c.total - c.consumed - c.processing), 0),
       coalesce(sum(c.processing), 0),
       coalesce(sum(c.consumed - d.dlq_consumed), 0),
       coalesce(sum(d.dlq), 0),
       min(c.oldest_pending),
       now()
FROM queues q
LEFT JOIN partitions p ON p.queue_id = q.id
LEFT JOIN LATERAL (SELECT coalesce(min(pc.cursor_seq), 0) AS min_cursor
                   FROM partition_consumers pc WHERE pc.partition_id = p.id) f ON true
LEFT JOIN LATERAL (
    -- Only the unconsumed tail is counted; the stored total is partitions.message_count.
    SELECT p.message_count AS total,
           p.message_count - count(*) AS consumed,
           count(*) FILTER (WHERE EXISTS (
               SELECT 1 FROM partition_consumers pc
               WHERE pc.partition_id = p.id AND pc.lease_expires_at > now()
                 AND m.seq > pc.cursor_seq AND m.seq <= pc.delivered_seq)) AS processing,
           min(m.created_at) AS oldest_pending
    FROM messages m WHERE m.partition_id = p.id AND m.seq > f.min_cursor) c ON true
LEFT JOIN LATERAL (
    SELECT count(DISTINCT dl.message_seq) AS dlq,
           count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= f.min_cursor) AS dlq_consumed
    FROM dead_letters dl WHERE dl.partition_id = p.id) d ON true
GROUP BY q.id
ON CONFLICT (queue_id) DO UPDATE SET
    total = EXCLUDED.total, pending = EXCLUDED.pending, processing = EXCLUDED.processing,
    completed = EXCLUDED.completed, dead_letter = EXCLUDED.dead_letter,
    oldest_pending_at = EXCLUDED.oldest_pending_at, refreshed_at = EXCLUDED.refreshed_at

-- name: OpsAddQueueOps :exec
-- Adds one broker's counter deltas for the current minute.
INSERT INTO queue_ops_history AS h (bucket, queue_name, broker_id, push_requests, push_messages, pop_requests,
                                    pop_messages, pop_empty, ack_success, ack_failed, dlq, lag_sum_ms, lag_count, lag_max_ms)
SELECT date_trunc('minute', $1::timestamptz), t.*
FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
            $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[]) AS t
ON CONFLICT (bucket, queue_name, broker_id) DO UPDATE SET
    push_requests = h.push_requests + EXCLUDED.push_requests, push_messages = h.push_messages + EXCLUDED.push_messages,
    pop_requests = h.pop_requests + EXCLUDED.pop_requests, pop_messages = h.pop_messages + EXCLUDED.pop_messages,
    pop_empty = h.pop_empty + EXCLUDED.pop_empty, ack_success = h.ack_success + EXCLUDED.ack_success,
    ack_failed = h.ack_failed + EXCLUDED.ack_failed, dlq = h.dlq + EXCLUDED.dlq,
    lag_sum_ms = h.lag_sum_ms + EXCLUDED.lag_sum_ms, lag_count = h.lag_count + EXCLUDED.lag_count,
    lag_max_ms = greatest(h.lag_max_ms, EXCLUDED.lag_max_ms)

-- name: OpsQueueOpsSeries :many
-- Counters summed over brokers per bucket of $4 minutes between $1 and $2, for queue $3 (NULL = all).
SELECT to_timestamp(floor(extract(epoch FROM bucket) / ($4 * 60)) * ($4 * 60)) AS b, queue_name,
       sum(push_requests)::bigint, sum(push_messages)::bigint, sum(pop_requests)::bigint, sum(pop_messages)::bigint,
       sum(pop_empty)::bigint, sum(ack_success)::bigint, sum(ack_failed)::bigint, sum(dlq)::bigint,
       sum(lag_sum_ms)::bigint, sum(lag_count)::bigint, max(lag_max_ms)::bigint
FROM queue_ops_history
WHERE bucket >= date_trunc('minute', $1::timestamptz) AND bucket <= $2 AND ($3::text IS NULL OR queue_name = $3)
GROUP BY 1, 2
ORDER BY 1 DESC, 2

-- name: OpsRetentionSeries :many
SELECT to_timestamp(floor(extract(epoch FROM executed_at) / ($3 * 60)) * ($3 * 60)) AS b, coalesce(queue_name, ''),
       kind, sum(deleted)::bigint
FROM retention_history
WHERE executed_at >= $1 AND executed_at <= $2
GROUP BY 1, 2, 3
ORDER BY 1 DESC, 2, 3

-- name: OpsDeleteExpired :many
-- retentionSeconds: messages older than the queue's retention, whatever their state, oldest first, at
-- most $2 per partition. Their dead letters go with them; traces cascade.
WITH victims AS (
    SELECT m.partition_id, m.seq, m.transaction_id, q.name AS queue_name
    FROM queues q
    JOIN partitions p ON p.queue_id = q.id
    CROSS JOIN LATERAL (
        SELECT m.seq, m.partition_id, m.transaction_id FROM messages m
        WHERE m.partition_id = p.id AND m.created_at < $1::timestamptz - make_interval(secs => q.retention_seconds)
          AND m.seq < coalesce((SELECT y.seq FROM messages y
                                 WHERE y.partition_id = p.id
                                   AND y.created_at >= $1::timestamptz - make_interval(secs => q.retention_seconds)
                                 ORDER BY y.seq LIMIT 1), p.last_seq + 1)
        ORDER BY m.seq LIMIT $2) m
    WHERE q.retention_enabled AND q.retention_seconds > 0
), del AS (
    DELETE FROM messages m USING victims v WHERE m.partition_id = v.partition_id AND m.seq = v.seq
    RETURNING m.partition_id, m.transaction_id, v.queue_name
), dl AS (
    DELETE FROM dead_letters d USING del WHERE d.partition_id = del.partition_id AND d.transaction_id = del.transaction_id
), counted AS (
    UPDATE partitions p SET message_count = p.message_count - x.n
    FROM (SELECT partition_id, count(*) AS n FROM del GROUP BY partition_id) x
    WHERE p.id = x.partition_id
), hist AS (
    INSERT INTO retention_history (queue_name, kind, deleted, executed_at)
    SELECT queue_name, 'retention', count(*), $1 FROM del GROUP BY queue_name
)
SELECT queue_name, count(*) FROM del GROUP BY queue_name

-- name: OpsDeleteCompleted :many
-- completedRetentionSeconds: messages older than that which every consumer group existing on the
-- queue has consumed. A group without a cursor on the partition counts as having consumed nothing, so
-- nothing above any live cursor is ever deleted.
WITH frontier AS (
    SELECT p.id AS partition_id, q.name AS queue_name, q.completed_retention_seconds AS secs,
           (SELECT CASE WHEN bool_or(pc.partition_id IS NULL) THEN 0 ELSE coalesce(min(pc.cursor_seq), 0) END
            FROM (SELECT DISTINCT x.consumer_group FROM partition_consumers x
                    JOIN partitions px ON px.id = x.partition_id WHERE px.queue_id = q.id) g
            LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
           ) AS upto
    FROM queues q JOIN partitions p ON p.queue_id = q.id
    WHERE q.retention_enabled AND q.completed_retention_seconds > 0
), victims AS (
    SELECT f.partition_id, m.seq, f.queue_name
    FROM frontier f
    CROSS JOIN LATERAL (
        SELECT m.seq FROM messages m
        WHERE m.partition_id = f.partition_id AND m.seq <= f.upto
          AND m.created_at < $1::timestamptz - make_interval(secs => f.secs)
        ORDER BY m.seq LIMIT $2) m
    WHERE f.upto > 0
), del AS (
    DELETE FROM messages m USING victims v WHERE m.partition_id = v.partition_id AND m.seq = v.seq
    RETURNING m.partition_id, m.transaction_id, v.queue_name
), dl AS (
    DELETE FROM dead_letters d USING del WHERE d.partition_id = del.partition_id AND d.transaction_id = del.transaction_id
), counted AS (
    UPDATE partitions p SET message_count = p.message_count - x.n
    FROM (SELECT partition_id, count(*) AS n FROM del GROUP BY partition_id) x
    WHERE p.id = x.partition_id
), hist AS (
    INSERT INTO retention_history (queue_name, kind, deleted, executed_at)
    SELECT queue_name, 'completed_retention', count(*), $1 FROM del GROUP BY queue_name
)
SELECT queue_name, count(*) FROM del GROUP BY queue_name

-- name: OpsCleanupPartitions :many
-- Partitions (other than Default) with no messages and no activity for $2 days.
WITH victims AS (
    SELECT p.id, q.name AS queue_name
    FROM partitions p JOIN queues q ON q.id = p.queue_id
    WHERE p.name <> 'Default'
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.partition_id = p.id)
      AND greatest(p.created_at, p.last_push_at,
                   (SELECT max(greatest(pc.created_at, pc.last_claimed_at, pc.last_consumed_at))
                    FROM partition_consumers pc WHERE pc.partition_id = p.id))
          < $1::timestamptz - make_interval(days => $2)
    ORDER BY p.id
    LIMIT 1000
), del AS (
    DELETE FROM partitions p USING victims v WHERE p.id = v.id RETURNING v.queue_name
), hist AS (
    INSERT INTO retention_history (queue_name, kind, deleted, executed_at)
    SELECT queue_name, 'partition_cleanup', count(*), $1 FROM del GROUP BY queue_name
)
SELECT queue_name, count(*) FROM del GROUP BY queue_name

-- name: OpsTrimHistory :one
-- Metrics and history older than $2 days.
WITH a AS (
    DELETE FROM queue_ops_history WHERE bucket < $1::timestamptz - make_interval(days => $2) RETURNING 1
), b AS (
    DELETE FROM retention_history WHERE executed_at < $1::timestamptz - make_interval(days => $2) RETURNING 1
)
SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)
