-- name: MonthlyMessages :one
SELECT coalesce((SELECT messages FROM usage_monthly WHERE cluster_id = $1 AND month = $2), 0)

-- name: ReserveMessages :one
-- Takes $3 messages of the month's quota $4 in one statement, or nothing: the row lock of ON CONFLICT
-- serialises concurrent reservations (of every proxy sharing the database), and the WHERE is evaluated
-- on the latest count. A first reservation of the month inserts only when it fits. The second column
-- is the count before this statement, for the refusal's message.
WITH bump AS (
    INSERT INTO usage_monthly (cluster_id, month, messages)
    SELECT $1::bigint, $2::text, $3::bigint WHERE $3::bigint <= $4::bigint
    ON CONFLICT (cluster_id, month) DO UPDATE SET messages = usage_monthly.messages + excluded.messages
    WHERE usage_monthly.messages + excluded.messages <= $4::bigint
    RETURNING messages
)
SELECT (SELECT messages FROM bump) AS reserved,
       coalesce((SELECT messages FROM usage_monthly WHERE cluster_id = $1 AND month = $2), 0) AS used

-- name: ReleaseMessages :exec
UPDATE usage_monthly SET messages = greatest(messages - $3::bigint, 0) WHERE cluster_id = $1 AND month = $2

-- name: AddUsage :exec
WITH bump AS (
    UPDATE clusters SET storage_bytes_used = storage_bytes_used + $4 WHERE id = $1
)
INSERT INTO usage_monthly (cluster_id, month, messages, bytes) VALUES ($1, $2, $3, $4)
ON CONFLICT (cluster_id, month) DO UPDATE
SET messages = usage_monthly.messages + excluded.messages, bytes = usage_monthly.bytes + excluded.bytes

-- name: SetMonthlyMessages :exec
INSERT INTO usage_monthly (cluster_id, month, messages) VALUES ($1, $2, $3)
ON CONFLICT (cluster_id, month) DO UPDATE SET messages = excluded.messages

-- name: CountQueues :one
SELECT count(DISTINCT queue) FROM known_partitions WHERE cluster_id = $1

-- name: PartitionsOfQueues :many
SELECT queue, partition FROM known_partitions WHERE cluster_id = $1 AND queue = ANY($2::text[])

-- name: RecordPartitions :exec
INSERT INTO known_partitions (cluster_id, queue, partition)
SELECT $1, q, p FROM unnest($2::text[], $3::text[]) AS t(q, p)
ON CONFLICT DO NOTHING

-- name: ForgetQueue :exec
DELETE FROM known_partitions WHERE cluster_id = $1 AND queue = $2
