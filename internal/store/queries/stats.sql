-- name: StatsRefresh :exec
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

-- name: QueueOpsAdd :exec
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
