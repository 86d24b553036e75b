-- name: DeadLetterList :many
-- Newest failure first.
SELECT d.message_id, d.transaction_id, d.partition_id, f.queue_name, f.partition_name, d.consumer_group,
       d.error_message, d.retry_count, m.payload, m.is_encrypted, m.producer_sub, m.trace_id,
       d.original_created_at, d.failed_at, 0::bigint
FROM dead_letters_matching($1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz) f
JOIN dead_letters d ON d.id = f.id
-- The message by a one-row range in seq order (queries/pop.sql, the redelivery, says why).
LEFT JOIN LATERAL (SELECT m.* FROM messages m
                   WHERE m.partition_id = d.partition_id AND m.seq >= d.message_seq AND m.seq <= d.message_seq
                   ORDER BY m.seq LIMIT 1) m ON true
ORDER BY d.failed_at DESC, d.id
LIMIT $6 OFFSET $7

-- name: DeadLetterCount :one
-- The total of the listing's filter.
SELECT count(*) FROM dead_letters_matching($1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz)

-- name: DeadLetterGet :many
SELECT d.message_id, d.transaction_id, d.partition_id, q.name, p.name, d.consumer_group, d.error_message,
       d.retry_count, m.payload, m.is_encrypted, m.producer_sub, m.trace_id, d.original_created_at, d.failed_at,
       0::bigint
FROM dead_letters d
JOIN partitions p ON p.id = d.partition_id
JOIN queues q ON q.id = p.queue_id
-- The message by a one-row range in seq order (queries/pop.sql, the redelivery, says why).
LEFT JOIN LATERAL (SELECT m.* FROM messages m
                   WHERE m.partition_id = d.partition_id AND m.seq >= d.message_seq AND m.seq <= d.message_seq
                   ORDER BY m.seq LIMIT 1) m ON true
WHERE d.partition_id = $1 AND d.transaction_id = $2 AND ($3::text IS NULL OR d.consumer_group = $3::text)
ORDER BY d.failed_at DESC

-- name: DeadLetterDelete :one
WITH del AS (
    DELETE FROM dead_letters
    WHERE partition_id = $1 AND transaction_id = $2 AND ($3::text IS NULL OR consumer_group = $3::text)
    RETURNING 1
)
SELECT count(*) FROM del

-- name: DeadLetterRetry :one
-- Serves the message again to each group it was dead-lettered for (and only to that group).
WITH del AS (
    DELETE FROM dead_letters
    WHERE partition_id = $1 AND transaction_id = $2 AND ($3::text IS NULL OR consumer_group = $3::text)
    RETURNING partition_id, consumer_group, message_seq
), ins AS (
    INSERT INTO redeliveries (partition_id, consumer_group, seq)
    SELECT partition_id, consumer_group, message_seq FROM del
    ON CONFLICT DO NOTHING
), lk AS (
    -- Locked like a push, so an ack cannot drop the partition's pending-work record meanwhile
    -- (PendingForgetConsumed in ack.sql).
    SELECT id, queue_id FROM partitions WHERE id = $1 FOR NO KEY UPDATE
), pend AS (
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT DISTINCT del.partition_id, del.consumer_group, lk.queue_id, coalesce($4::timestamptz, now())
    FROM del JOIN lk ON lk.id = del.partition_id
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
)
SELECT count(*) FROM del

-- name: DeadLetterCountByQueue :many
SELECT q.name, count(*)
FROM dead_letters dl JOIN partitions p ON p.id = dl.partition_id JOIN queues q ON q.id = p.queue_id
GROUP BY q.name
