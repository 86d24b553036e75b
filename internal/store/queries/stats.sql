-- name: StatsRefresh :exec
-- Rewrites queue_stats for every queue with the per-partition rules of partition_counts (migration
-- 0009), the ones PartitionCounts shows.
INSERT INTO queue_stats AS s (queue_id, total, pending, processing, completed, dead_letter, oldest_pending_at, refreshed_at)
SELECT q.id,
       coalesce(sum(c.total), 0),
       coalesce(sum(c.total - c.consumed - c.processing), 0),
       coalesce(sum(c.processing), 0),
       coalesce(sum(c.consumed - c.dlq_consumed), 0),
       coalesce(sum(c.dlq), 0),
       min(c.oldest_pending),
       now()
FROM queues q
LEFT JOIN partitions p ON p.queue_id = q.id
LEFT JOIN LATERAL partition_counts(p.id, p.message_count) c ON true
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
