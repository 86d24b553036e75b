-- name: EnsureQueues :exec
-- Auto-created queues take namespace/task from the first two dot-segments of their name.
INSERT INTO queues (id, name, namespace, task)
SELECT gen_random_uuid(), n,
       CASE WHEN strpos(n, '.') > 0 THEN split_part(n, '.', 1) ELSE '' END,
       CASE WHEN strpos(n, '.') > 0 THEN split_part(n, '.', 2) ELSE '' END
FROM (SELECT DISTINCT unnest($1::text[]) AS n) s
ORDER BY n
ON CONFLICT (name) DO NOTHING

-- name: EnsurePartitions :exec
INSERT INTO partitions (id, queue_id, name)
SELECT gen_random_uuid(), q.id, t.p
FROM (SELECT DISTINCT qn, p FROM unnest($1::text[], $2::text[]) AS u(qn, p)) t
JOIN queues q ON q.name = t.qn
ORDER BY q.id, t.p
ON CONFLICT (queue_id, name) DO NOTHING

-- name: PartitionIDs :many
SELECT t.qn, t.p, p.id
FROM (SELECT DISTINCT qn, p FROM unnest($1::text[], $2::text[]) AS u(qn, p)) t
JOIN queues q ON q.name = t.qn
JOIN partitions p ON p.queue_id = q.id AND p.name = t.p

-- name: ConfigureQueue :one
-- Full replace: every option the request did not give is reset to its default by the caller.
INSERT INTO queues (id, name, namespace, task, priority, lease_time, retry_limit, retry_delay, max_size, ttl,
                    dead_letter_queue, dlq_after_max_retries, delayed_processing, window_buffer,
                    retention_seconds, completed_retention_seconds, retention_enabled, encryption_enabled,
                    max_wait_time_seconds)
VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
ON CONFLICT (name) DO UPDATE SET
    namespace = EXCLUDED.namespace, task = EXCLUDED.task, priority = EXCLUDED.priority,
    lease_time = EXCLUDED.lease_time, retry_limit = EXCLUDED.retry_limit, retry_delay = EXCLUDED.retry_delay,
    max_size = EXCLUDED.max_size, ttl = EXCLUDED.ttl, dead_letter_queue = EXCLUDED.dead_letter_queue,
    dlq_after_max_retries = EXCLUDED.dlq_after_max_retries, delayed_processing = EXCLUDED.delayed_processing,
    window_buffer = EXCLUDED.window_buffer, retention_seconds = EXCLUDED.retention_seconds,
    completed_retention_seconds = EXCLUDED.completed_retention_seconds,
    retention_enabled = EXCLUDED.retention_enabled, encryption_enabled = EXCLUDED.encryption_enabled,
    max_wait_time_seconds = EXCLUDED.max_wait_time_seconds
RETURNING id

-- name: EnsureDefaultPartition :one
WITH ins AS (
    INSERT INTO partitions (id, queue_id, name) VALUES (gen_random_uuid(), $1, 'Default')
    ON CONFLICT (queue_id, name) DO NOTHING
    RETURNING id
)
SELECT id FROM ins
UNION ALL
SELECT id FROM partitions WHERE queue_id = $1 AND name = 'Default'
LIMIT 1

-- name: QueueLimits :many
SELECT name, max_size FROM queues WHERE name = ANY($1::text[])
