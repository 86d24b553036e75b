-- name: ExtendLease :many
-- Extends every partition lease held under the lease id; never shortens one. live = the lease was
-- still running (an expired or released lease is reported, not revived).
SELECT pc.partition_id,
       coalesce(pc.lease_expires_at > now(), false) AS live,
       CASE WHEN pc.lease_expires_at > now()
            THEN greatest(pc.lease_expires_at, now() + make_interval(secs => $2)) END AS expires
FROM partition_consumers pc
WHERE pc.lease_id = $1
ORDER BY pc.partition_id
FOR UPDATE

-- name: ApplyLeaseExtension :exec
UPDATE partition_consumers
SET lease_expires_at = greatest(lease_expires_at, now() + make_interval(secs => $2))
WHERE lease_id = $1 AND lease_expires_at > now()

-- name: DeleteQueue :one
WITH del AS (DELETE FROM queues WHERE name = $1 RETURNING 1)
SELECT count(*) FROM del

-- name: QueuesByNamespaceTask :many
-- Queues a namespace/task pop drains, highest priority first.
SELECT name FROM queues
WHERE ($1::text IS NULL OR namespace = $1::text) AND ($2::text IS NULL OR task = $2::text)
ORDER BY priority DESC, name

-- name: QueueBacklog :many
-- Messages not yet consumed by every cursor of the queue, per queue (for maxSize): for each partition,
-- last_seq minus the lowest cursor (0 when no consumer has a cursor there). Sequence gaps of dropped
-- duplicates make it an upper bound.
SELECT q.name, q.max_size, coalesce(sum(p.last_seq - coalesce(c.low, 0)), 0)::bigint
FROM queues q
LEFT JOIN partitions p ON p.queue_id = q.id
LEFT JOIN LATERAL (SELECT min(pc.cursor_seq) AS low FROM partition_consumers pc WHERE pc.partition_id = p.id) c ON true
WHERE q.name = ANY($1::text[]) AND q.max_size > 0
GROUP BY q.name, q.max_size

-- name: ExpireWaiting :many
-- maxWaitTimeSeconds: messages that waited longer than their queue allows, for each group cursor of
-- the queue (not under a live lease), move to that group's dead letters; the cursor moves past them.
WITH exp AS (
    SELECT pc.partition_id, pc.consumer_group, m.seq, m.id, m.transaction_id, m.created_at
    FROM queues q
    JOIN partitions p ON p.queue_id = q.id
    JOIN partition_consumers pc ON pc.partition_id = p.id
    JOIN messages m ON m.partition_id = p.id AND m.seq > pc.cursor_seq
    WHERE q.max_wait_time_seconds > 0
      AND m.created_at < now() - make_interval(secs => q.max_wait_time_seconds)
      AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= now())
    ORDER BY pc.partition_id, pc.consumer_group, m.seq
    LIMIT $1
), dl AS (
    INSERT INTO dead_letters (id, partition_id, message_seq, message_id, transaction_id, consumer_group,
                              error_message, retry_count, original_created_at)
    SELECT gen_random_uuid(), partition_id, seq, id, transaction_id, consumer_group, 'max wait time exceeded', 0, created_at
    FROM exp
    ON CONFLICT (partition_id, transaction_id, consumer_group) DO NOTHING
), mv AS (
    UPDATE partition_consumers pc SET cursor_seq = greatest(pc.cursor_seq, e.seq)
    FROM (SELECT partition_id, consumer_group, max(seq) AS seq FROM exp GROUP BY 1, 2) e
    WHERE pc.partition_id = e.partition_id AND pc.consumer_group = e.consumer_group
      AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= now())
)
SELECT count(*) FROM exp

-- name: TryJobLock :one
-- One broker per interval runs a background job: the lock lives as long as the job's transaction.
SELECT pg_try_advisory_xact_lock($1)

-- name: GetStates :many
SELECT key, value FROM system_state WHERE key = ANY($1::text[])

-- name: SetState :exec
INSERT INTO system_state (key, value, updated_at) VALUES ($1, $2, now())
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
