-- Streams: query registry, per-shard state and the pieces of the atomic cycle commit. The tables live
-- in the fixed public schema queen_streams, so every statement names it.

-- name: StreamsLockQueryName :exec
-- Serialises concurrent registrations of one name (the insert-or-compare below is not atomic alone).
SELECT pg_advisory_xact_lock(hashtextextended('queen_streams.queries:' || $1::text, 0))

-- name: StreamsQueryByName :one
SELECT id, config_hash FROM queen_streams.queries WHERE name = $1 FOR UPDATE

-- name: StreamsInsertQuery :one
INSERT INTO queen_streams.queries (name, source_queue, sink_queue, config_hash)
VALUES ($1, $2, nullif($3, ''), $4)
RETURNING id

-- name: StreamsUpdateQuery :exec
UPDATE queen_streams.queries
SET source_queue = $2, sink_queue = nullif($3, ''), config_hash = $4, updated_at = now()
WHERE id = $1

-- name: StreamsWipeState :exec
DELETE FROM queen_streams.state WHERE query_id = $1

-- name: StreamsGetState :many
-- keys: empty = every key; prefix: '' = no filter (LIKE without escaping, as the contract says);
-- ripe: NULL = no filter, otherwise only rows whose numeric value.windowEnd is at or before it.
SELECT key, value, updated_at
FROM queen_streams.state
WHERE query_id = $1 AND partition_id = $2
  AND (cardinality($3::text[]) = 0 OR key = ANY ($3::text[]))
  AND ($4::text = '' OR key LIKE $4::text || '%')
  AND ($5::float8 IS NULL OR (jsonb_typeof(value -> 'windowEnd') = 'number'
                              AND (value ->> 'windowEnd')::float8 <= $5::float8))
ORDER BY key

-- name: StreamsLockShard :exec
-- One writer per (query, source partition): a cycle and an idle-flush cycle of the same shard never
-- interleave their read-modify-write of a window row.
SELECT pg_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 0))

-- name: StreamsSourceQueue :many
SELECT q.name FROM partitions p JOIN queues q ON q.id = p.queue_id WHERE p.id = $1

-- name: StreamsUpsertState :exec
INSERT INTO queen_streams.state (query_id, partition_id, key, value, updated_at)
VALUES ($1, $2, $3, $4, now())
ON CONFLICT (query_id, partition_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()

-- name: StreamsDeleteState :exec
DELETE FROM queen_streams.state WHERE query_id = $1 AND partition_id = $2 AND key = $3

-- name: StreamsStateVersions :many
-- The stored version (updated_at) of the keys a cycle made expectations about; absent keys are
-- simply missing from the answer.
SELECT key, updated_at FROM queen_streams.state
WHERE query_id = $1 AND partition_id = $2 AND key = ANY ($3::text[])
