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

-- name: StreamsRecordCycle :many
-- Records a cycle id ($3) for $4 seconds in the cycle's own transaction; no row back means the id is
-- recorded and not expired: the cycle committed before (a retry whose answer was lost) and must apply
-- nothing. An expired record not yet deleted is taken over. Waits for an uncommitted attempt with the
-- same id, so a retry racing its first attempt sees how that one ended.
INSERT INTO queen_streams.cycles AS c (query_id, partition_id, cycle_id, expires_at)
VALUES ($1, $2, $3, now() + make_interval(secs => $4::float8))
ON CONFLICT (query_id, partition_id, cycle_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
WHERE c.expires_at < now()
RETURNING 1

-- name: StreamsForgetCycles :exec
DELETE FROM queen_streams.cycles WHERE query_id = $1 AND partition_id = $2 AND expires_at < now()

-- name: StreamsSourceLeased :many
-- Locks the (source partition, group) consumer row and says whether its lease is live ($3 now, NULL:
-- the database clock). The lock holds a pop of the partition until this cycle commits, so a runner that
-- pops it next reads the state as this cycle leaves it. The group only in row bounds on the primary key,
-- as in ConsumerLock (queries/ack.sql says why). No row: never popped by the group, nothing leased.
SELECT coalesce(pc.lease_expires_at > coalesce($3::timestamptz, now()), false)
FROM partition_consumers pc
WHERE pc.partition_id = $1
  AND (pc.partition_id, pc.consumer_group) >= ($1::uuid, $2::text)
  AND (pc.partition_id, pc.consumer_group) <= ($1::uuid, $2::text)
FOR UPDATE
