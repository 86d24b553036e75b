-- name: QueueOpsSeries :many
-- Counters summed over brokers per bucket of $4 minutes between $1 and $2, for queue $3 (NULL = all).
SELECT to_timestamp(floor(extract(epoch FROM bucket) / ($4 * 60)) * ($4 * 60)) AS b, queue_name,
       sum(push_requests)::bigint, sum(push_messages)::bigint, sum(pop_requests)::bigint, sum(pop_messages)::bigint,
       sum(pop_empty)::bigint, sum(ack_success)::bigint, sum(ack_failed)::bigint, sum(dlq)::bigint,
       sum(lag_sum_ms)::bigint, sum(lag_count)::bigint, max(lag_max_ms)::bigint
FROM queue_ops_history
WHERE bucket >= date_trunc('minute', $1::timestamptz) AND bucket <= $2 AND ($3::text IS NULL OR queue_name = $3)
GROUP BY 1, 2
ORDER BY 1 DESC, 2

-- name: RetentionSeries :many
SELECT to_timestamp(floor(extract(epoch FROM executed_at) / ($3 * 60)) * ($3 * 60)) AS b, coalesce(queue_name, ''),
       kind, sum(deleted)::bigint
FROM retention_history
WHERE executed_at >= $1 AND executed_at <= $2
GROUP BY 1, 2, 3
ORDER BY 1 DESC, 2, 3
