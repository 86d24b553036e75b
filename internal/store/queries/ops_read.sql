-- name: OpsListQueues :many
-- Queue listing from the rolled-up stats ($1 namespace, $2 task: NULL = any). Partition counts and
-- consumption totals are read live (small tables); message counts are at most one stats interval old.
SELECT q.id, q.name, q.namespace, q.task, q.priority, q.created_at,
       (SELECT count(*) FROM partitions p WHERE p.queue_id = q.id),
       coalesce(s.total, 0), coalesce(s.pending, 0), coalesce(s.processing, 0), coalesce(s.completed, 0),
       coalesce(s.dead_letter, 0), s.oldest_pending_at, s.refreshed_at,
       (SELECT coalesce(sum(pc.total_consumed), 0)::bigint FROM partition_consumers pc
          JOIN partitions p ON p.id = pc.partition_id WHERE p.queue_id = q.id)
FROM queues q
LEFT JOIN queue_stats s ON s.queue_id = q.id
WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.task = $2)
ORDER BY q.created_at DESC, q.name
LIMIT $3 OFFSET $4

-- name: OpsQueueByName :one
SELECT id, name, namespace, task, priority, created_at, lease_time, retry_limit, retry_delay, ttl, max_size,
       dead_letter_queue, retention_enabled, retention_seconds, completed_retention_seconds, encryption_enabled
FROM queues WHERE name = $1

-- name: OpsPartitionCounts :many
-- Exact counts for each partition of queue $1. "Consumed" is relative to the slowest consumer group of
-- the partition (min cursor_seq; 0 without any group); processing = above it and inside a live lease.
SELECT p.id, p.name, p.created_at, p.last_push_at, c.total, c.consumed, c.processing, d.dlq, d.dlq_consumed,
       c.oldest, c.newest, c.oldest_pending,
       (SELECT coalesce(sum(pc.total_consumed), 0)::bigint FROM partition_consumers pc WHERE pc.partition_id = p.id),
       (SELECT max(pc.last_consumed_at) FROM partition_consumers pc WHERE pc.partition_id = p.id)
FROM partitions p
CROSS JOIN LATERAL (SELECT coalesce(min(pc.cursor_seq), 0) AS min_cursor
                    FROM partition_consumers pc WHERE pc.partition_id = p.id) f
CROSS JOIN LATERAL (
    -- Only the unconsumed tail is counted (an index range on (partition_id, seq)); the stored total
    -- is partitions.message_count.
    SELECT p.message_count AS total,
           p.message_count - count(*) AS consumed,
           count(*) FILTER (WHERE EXISTS (
               SELECT 1 FROM partition_consumers pc
               WHERE pc.partition_id = p.id AND pc.lease_expires_at > now()
                 AND m.seq > pc.cursor_seq AND m.seq <= pc.delivered_seq)) AS processing,
           (SELECT o.created_at FROM messages o WHERE o.partition_id = p.id ORDER BY o.seq LIMIT 1) AS oldest,
           (SELECT o.created_at FROM messages o WHERE o.partition_id = p.id ORDER BY o.seq DESC LIMIT 1) AS newest,
           min(m.created_at) AS oldest_pending
    FROM messages m WHERE m.partition_id = p.id AND m.seq > f.min_cursor) c
CROSS JOIN LATERAL (
    SELECT count(DISTINCT dl.message_seq) AS dlq,
           count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= f.min_cursor) AS dlq_consumed
    FROM dead_letters dl WHERE dl.partition_id = p.id) d
WHERE p.queue_id = $1
ORDER BY p.name

-- name: OpsListMessages :many
-- $1 queue, $2 partition, $5 namespace, $6 task (NULL = any); $3 the consumer group the status is
-- relative to; $4 status filter (NULL = any); $7 limit, $8 offset. Newest first, no payloads.
SELECT m.id, m.transaction_id, m.partition_id, q.name, p.name, q.namespace, q.task, m.trace_id, m.producer_sub,
       q.priority, m.created_at, st.status,
       CASE WHEN st.status = 'processing' THEN pc.lease_expires_at END
FROM messages m
JOIN partitions p ON p.id = m.partition_id
JOIN queues q ON q.id = p.queue_id
LEFT JOIN partition_consumers pc ON pc.partition_id = m.partition_id AND pc.consumer_group = $3
CROSS JOIN LATERAL (SELECT CASE
    WHEN EXISTS (SELECT 1 FROM dead_letters dl WHERE dl.partition_id = m.partition_id AND dl.message_seq = m.seq
                   AND dl.consumer_group = $3) THEN 'dead_letter'
    WHEN m.seq <= coalesce(pc.cursor_seq, 0) THEN 'completed'
    WHEN pc.lease_expires_at > now() AND m.seq <= pc.delivered_seq THEN 'processing'
    ELSE 'pending' END AS status) st
WHERE ($1::text IS NULL OR q.name = $1) AND ($2::text IS NULL OR p.name = $2)
  AND ($5::text IS NULL OR q.namespace = $5) AND ($6::text IS NULL OR q.task = $6)
  AND ($4::text IS NULL OR st.status = $4)
  AND ($4::text IS NULL OR $4 NOT IN ('pending', 'processing') OR m.seq > coalesce(pc.cursor_seq, 0))
ORDER BY m.created_at DESC, m.seq DESC
LIMIT $7 OFFSET $8

-- name: OpsQueueGroups :many
-- The consumer groups that exist on queue $1 (by name).
SELECT DISTINCT pc.consumer_group
FROM partition_consumers pc JOIN partitions p ON p.id = pc.partition_id JOIN queues q ON q.id = p.queue_id
WHERE q.name = $1
ORDER BY 1

-- name: OpsGetMessage :one
SELECT m.id, m.transaction_id, m.partition_id, q.name, p.name, q.namespace, q.task, m.payload, m.is_encrypted,
       m.trace_id, m.producer_sub, m.created_at, q.lease_time, q.retry_limit, q.retry_delay, q.ttl, q.priority, m.seq
FROM messages m
JOIN partitions p ON p.id = m.partition_id
JOIN queues q ON q.id = p.queue_id
WHERE m.partition_id = $1 AND m.transaction_id = $2

-- name: OpsMessageConsumers :many
-- Every group that exists on the message's queue, with its view of message ($1 partition, $2 seq).
SELECT g.consumer_group, coalesce($2 <= pc.cursor_seq, false),
       CASE WHEN pc.lease_expires_at > now() AND $2 > pc.cursor_seq AND $2 <= pc.delivered_seq
            THEN pc.lease_expires_at END,
       coalesce(pc.batch_retry_count, 0), dl.error_message, dl.retry_count
FROM (SELECT DISTINCT x.consumer_group FROM partition_consumers x
        JOIN partitions px ON px.id = x.partition_id
        WHERE px.queue_id = (SELECT queue_id FROM partitions WHERE id = $1)) g
LEFT JOIN partition_consumers pc ON pc.partition_id = $1 AND pc.consumer_group = g.consumer_group
LEFT JOIN dead_letters dl ON dl.partition_id = $1 AND dl.message_seq = $2 AND dl.consumer_group = g.consumer_group
ORDER BY 1

-- name: OpsDeleteMessage :one
-- Deletes one message with its dead letters (traces cascade); NULL row when it did not exist.
WITH del AS (
    DELETE FROM messages WHERE partition_id = $1 AND transaction_id = $2 RETURNING partition_id, transaction_id
), dl AS (
    DELETE FROM dead_letters d USING del WHERE d.partition_id = del.partition_id AND d.transaction_id = del.transaction_id
), counted AS (
    UPDATE partitions p SET message_count = p.message_count - x.n
    FROM (SELECT partition_id, count(*) AS n FROM del GROUP BY partition_id) x
    WHERE p.id = x.partition_id
)
SELECT count(*) FROM del

-- name: OpsDLQByQueue :many
SELECT q.name, count(*)
FROM dead_letters dl JOIN partitions p ON p.id = dl.partition_id JOIN queues q ON q.id = p.queue_id
GROUP BY q.name

-- name: OpsLeases :one
SELECT count(*) FILTER (WHERE lease_expires_at > now()),
       count(DISTINCT partition_id) FILTER (WHERE lease_expires_at > now()),
       coalesce(sum(delivered_count) FILTER (WHERE lease_expires_at > now()), 0)::bigint
FROM partition_consumers

-- name: OpsTopErrors :many
SELECT coalesce(error_message, ''), count(*) FROM dead_letters GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5

-- name: OpsDLQTotals :one
SELECT count(*), count(DISTINCT partition_id) FROM dead_letters

-- name: OpsEncryptedQueue :one
SELECT encryption_enabled FROM queues WHERE name = $1

-- name: OpsAnyEncryptedQueue :one
SELECT EXISTS (SELECT 1 FROM queues WHERE encryption_enabled)
