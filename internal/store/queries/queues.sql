-- name: QueueDelete :one
-- Messages have no foreign key to their partition (0010): delete_queue deletes them explicitly.
SELECT delete_queue($1)

-- name: QueueListByNamespaceTask :many
-- Queues a namespace/task pop drains, highest priority first.
SELECT name FROM queues
WHERE ($1::text IS NULL OR namespace = $1::text) AND ($2::text IS NULL OR task = $2::text)
ORDER BY priority DESC, name

-- name: QueueBacklog :many
-- Messages not yet consumed by every group of the queue (queue_groups, migration 0021), per queue (for
-- maxSize): for each partition, last_seq minus the slowest group's position (0 where a group has no
-- cursor: a subscribed group that never read the partition has consumed none of it). The consumer rows
-- are read by partition alone and matched to the groups in the aggregate, as in
-- RetentionDeleteCompleted. Sequence gaps of dropped duplicates make it an upper bound.
SELECT q.name, q.max_size, coalesce(sum(p.last_seq - c.low), 0)::bigint
FROM (SELECT q.id, q.name, q.max_size, ARRAY(SELECT g.consumer_group FROM queue_groups(q.id) g) AS groups
      FROM queues q WHERE q.name = ANY($1::text[]) AND q.max_size > 0 OFFSET 0) q
LEFT JOIN partitions p ON p.queue_id = q.id
LEFT JOIN LATERAL (
    SELECT CASE WHEN count(*) FILTER (WHERE pc.consumer_group = ANY (q.groups)) < cardinality(q.groups) THEN 0
                ELSE coalesce(min(pc.cursor_seq) FILTER (WHERE pc.consumer_group = ANY (q.groups)), 0) END AS low
    FROM partition_consumers pc WHERE pc.partition_id = p.id) c ON true
GROUP BY q.name, q.max_size

-- name: QueueList :many
-- Queue listing from the rolled-up stats ($1 namespace, $2 task: NULL = any); statsAt is the latest
-- pass's end once a pass counted the queue (its counts are as of then). Partition counts and
-- consumption totals are read live (small tables); message counts are at most one stats interval old
-- (or ten passes' duration, when passes are long: docs/decisions.md "Stats from counters").
SELECT q.id, q.name, q.namespace, q.task, q.priority, q.created_at,
       (SELECT count(*) FROM partitions p WHERE p.queue_id = q.id),
       coalesce(s.total, 0), coalesce(s.pending, 0), coalesce(s.processing, 0), coalesce(s.completed, 0),
       coalesce(s.dead_letter, 0), s.oldest_pending_at, CASE WHEN s.queue_id IS NOT NULL THEN (SELECT sp.at FROM stats_pass sp) END,
       (SELECT coalesce(sum(pc.total_consumed), 0)::bigint FROM partition_consumers pc
          JOIN partitions p ON p.id = pc.partition_id WHERE p.queue_id = q.id)
FROM queues q
LEFT JOIN queue_stats s ON s.queue_id = q.id
WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.task = $2)
ORDER BY q.created_at DESC, q.name
LIMIT $3 OFFSET $4

-- name: QueueGetByName :one
SELECT id, name, namespace, task, priority, created_at, lease_time, retry_limit, retry_delay, ttl, max_size,
       dead_letter_queue, retention_enabled, retention_seconds, completed_retention_seconds, encryption_enabled,
       dlq_after_max_retries, delayed_processing, window_buffer, max_wait_time_seconds
FROM queues WHERE name = $1

-- name: PartitionCounts :many
-- Exact counts for each partition of queue $1 (partition_counts_at in migration 0021 says what they
-- mean), relative to the lowest position of the queue's groups (queue_groups, 0021): a group that
-- never read the partition is before its first message.
WITH g AS MATERIALIZED (SELECT consumer_group FROM queue_groups($1))
SELECT p.id, p.name, p.created_at, p.last_push_at, c.total, c.consumed, c.processing, c.dlq, c.dlq_consumed,
       (SELECT o.created_at FROM messages o WHERE o.partition_id = p.id ORDER BY o.seq LIMIT 1),
       (SELECT o.created_at FROM messages o WHERE o.partition_id = p.id ORDER BY o.seq DESC LIMIT 1),
       c.oldest_pending,
       (SELECT coalesce(sum(pc.total_consumed), 0)::bigint FROM partition_consumers pc WHERE pc.partition_id = p.id),
       (SELECT max(pc.last_consumed_at) FROM partition_consumers pc WHERE pc.partition_id = p.id)
FROM partitions p
CROSS JOIN LATERAL (
    SELECT coalesce(min(coalesce(pc.cursor_seq, 0)), 0) AS low
    FROM g LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
) f
CROSS JOIN LATERAL partition_counts_at(p.id, p.message_count, f.low) c
WHERE p.queue_id = $1
ORDER BY p.name

-- name: PartitionGroupCounts :many
-- Exact counts of each partition of queue $1 for each of the queue's groups (queue_groups, migration
-- 0021), at the group's position: its cursor, or before the first message where it has none.
-- unconsumed counts the messages after the position, processing those of them inside the group's
-- live lease; dlq the group's dead letters, dlq_consumed those at or before the position.
WITH g AS MATERIALIZED (SELECT consumer_group, queue_mode FROM queue_groups($1))
SELECT p.id, g.consumer_group, g.queue_mode, pc.cursor_seq, p.message_count,
       u.unconsumed, u.processing,
       coalesce(extract(epoch FROM coalesce($2::timestamptz, now()) - u.oldest), 0)::float8, d.dlq, d.dlq_consumed
FROM partitions p
CROSS JOIN g
LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
CROSS JOIN LATERAL (
    SELECT count(*) AS unconsumed,
           count(*) FILTER (WHERE pc.lease_expires_at > coalesce($2::timestamptz, now()) AND m.seq <= pc.delivered_seq) AS processing,
           min(m.created_at) AS oldest
    FROM messages m WHERE m.partition_id = p.id AND m.seq > coalesce(pc.cursor_seq, 0)
) u
CROSS JOIN LATERAL (
    SELECT count(DISTINCT dl.message_seq) AS dlq,
           count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= coalesce(pc.cursor_seq, 0)) AS dlq_consumed
    FROM dead_letters dl WHERE dl.partition_id = p.id AND dl.consumer_group = g.consumer_group
) d
WHERE p.queue_id = $1
ORDER BY p.name, g.queue_mode DESC, g.consumer_group

-- name: QueueGroupList :many
-- The consumer groups of queue $1 (by name; queue_groups, migration 0021).
SELECT g.consumer_group FROM queues q CROSS JOIN LATERAL queue_groups(q.id) g
WHERE q.name = $1
ORDER BY 1

-- name: QueueEncrypted :one
SELECT encryption_enabled FROM queues WHERE name = $1

-- name: QueueAnyEncrypted :one
SELECT EXISTS (SELECT 1 FROM queues WHERE encryption_enabled)

-- name: QueueEnsure :exec
-- Auto-created queues take namespace/task from the first two dot-segments of their name.
INSERT INTO queues (id, name, namespace, task)
SELECT gen_random_uuid(), n,
       CASE WHEN strpos(n, '.') > 0 THEN split_part(n, '.', 1) ELSE '' END,
       CASE WHEN strpos(n, '.') > 0 THEN split_part(n, '.', 2) ELSE '' END
FROM (SELECT DISTINCT unnest($1::text[]) AS n) s
ORDER BY n
ON CONFLICT (name) DO NOTHING

-- name: PartitionEnsure :exec
INSERT INTO partitions (id, queue_id, name)
SELECT gen_random_uuid(), q.id, t.p
FROM (SELECT DISTINCT qn, p FROM unnest($1::text[], $2::text[]) AS u(qn, p)) t
JOIN queues q ON q.name = t.qn
ORDER BY q.id, t.p
ON CONFLICT (queue_id, name) DO NOTHING

-- name: PartitionIDs :many
-- Each name is looked up in a LATERAL subquery keyed by its row, so both columns of
-- partitions_queue_id_name_key are index conditions whatever the statistics said when the plan was
-- built. As a join, a plan built while a queue had a few partitions read the queue's partitions (or all
-- of them) per looked-up name, with the name as a join filter: 914 ms per call at 100 000 partitions.
SELECT t.qn, t.p, p.id
FROM (SELECT DISTINCT qn, p FROM unnest($1::text[], $2::text[]) AS u(qn, p)) t
CROSS JOIN LATERAL (SELECT q.id FROM queues q WHERE q.name = t.qn LIMIT 1) q
CROSS JOIN LATERAL (SELECT p.id FROM partitions p WHERE p.queue_id = q.id AND p.name = t.p LIMIT 1) p

-- name: QueueConfigure :one
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

-- name: PartitionEnsureDefault :one
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
