-- name: PartitionLock :exec
-- Taken in id order by every pushing transaction, so concurrent batches never deadlock, and held to
-- commit, so sequence numbers are handed out in commit order. NO KEY UPDATE (what the last_seq update
-- takes anyway) leaves the FOR KEY SHARE of foreign-key checks free: pops and acks inserting consumer
-- rows for these partitions never wait on a push.
SELECT id FROM partitions WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE

-- name: PushPlanSettings :exec
-- $1 true: until the transaction ends (or PushPlanSettings false), plan without sequential scans. The
-- duplicate probe of MessageInsert must stay an index lookup: a plan made while messages looked empty
-- (a new database, or one that retention emptied) would otherwise read the whole table once per pushed
-- row, and a push's generic plan lives as long as its connection. No statement of a push wants a
-- sequential scan. $1 false restores the server's value, for explicit transactions that go on.
SELECT set_config('enable_seqscan', CASE WHEN $1::bool THEN 'off' ELSE (SELECT reset_val FROM pg_settings WHERE name = 'enable_seqscan') END, true)

-- name: MessageInsert :many
-- Runs after PartitionLock in the same transaction, so last_seq is current and stays ours, and no other
-- push can store a transactionId in these partitions until we commit. The broker has already dropped
-- rows repeating a (partition, transactionId) of an earlier row and numbered the rest: $3 is the row's
-- ordinal among its partition's rows of this statement. Rows whose transactionId the client chose ($10)
-- are looked up first and skipped when already stored (the probe sees every committed push, because
-- this statement's snapshot is taken after the locks were granted); rows with an id the broker minted
-- skip the probe. Skipped rows leave a gap in the numbering, as dropped duplicates always did. A row
-- carries the clock of its partition's bump, taken under the lock, so created_at never decreases along
-- a partition ($12: the broker's clock when it has one, docs/decisions.md "One clock"; NULL: the
-- database's). Returns the request indices of the rows NOT inserted: duplicates, and rows of a partition
-- that no longer exists (its queue was deleted).
-- Costs per row (bench -push-sql, docs/performance.md): no sort, window function or RETURNING join,
-- and no ON CONFLICT (whose speculative insertion writes a second WAL record per row).
WITH input AS MATERIALIZED (
    -- A LATERAL probe with LIMIT 1 is one index lookup per row; an EXISTS here may be planned as a
    -- hashed subplan that reads the whole table.
    SELECT t.*, d.hit IS NOT NULL AS dup
    FROM unnest($1::int[], $2::uuid[], $3::int[], $4::text[], $5::uuid[], $6::uuid[], $7::jsonb[], $8::text[], $9::bool[], $10::bool[])
        AS t(idx, partition_id, k, transaction_id, id, trace_id, payload, producer_sub, is_encrypted, probe)
    LEFT JOIN LATERAL (
        SELECT 1 AS hit FROM messages m
        WHERE t.probe AND m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
        LIMIT 1
    ) d ON true
), counts AS (
    SELECT partition_id, max(k) AS top, count(*) AS n FROM input WHERE NOT dup GROUP BY partition_id
), bump AS (
    UPDATE partitions p SET last_seq = p.last_seq + c.top, last_push_at = coalesce($12::timestamptz, clock_timestamp()), message_count = p.message_count + c.n
    FROM counts c
    WHERE p.id = c.partition_id
    RETURNING p.id, p.queue_id, p.last_seq - c.top AS base, p.last_push_at AS at
), ins AS (
    INSERT INTO messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at)
    SELECT i.partition_id, b.base + i.k, i.id, i.transaction_id, i.trace_id, i.payload, i.producer_sub, i.is_encrypted, b.at
    FROM input i JOIN bump b ON b.id = i.partition_id
    WHERE NOT i.dup
), pend AS (
    -- The partitions that received messages have work for the queue-mode group ($11) and every group
    -- subscribed to their queue (0006_pending_partitions.sql). An existing row keeps its place in line
    -- and is not locked.
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT b.id, g.consumer_group, b.queue_id, coalesce($12::timestamptz, now()) + make_interval(secs => q.delayed_processing)
    FROM bump b
    JOIN queues q ON q.id = b.queue_id
    CROSS JOIN LATERAL (
        SELECT $11::text AS consumer_group
        UNION ALL
        SELECT s.consumer_group FROM consumer_group_subscriptions s WHERE s.queue_id = b.queue_id AND s.consumer_group <> $11::text
    ) g
    ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
)
SELECT i.idx FROM input i WHERE i.dup OR NOT EXISTS (SELECT 1 FROM bump b WHERE b.id = i.partition_id)

-- name: MessageExistingIDs :many
SELECT t.idx, m.id
FROM unnest($1::int[], $2::uuid[], $3::text[]) AS t(idx, partition_id, transaction_id)
JOIN messages m ON m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id

-- name: QueueNotify :exec
SELECT pg_notify($1, n) FROM (SELECT DISTINCT unnest($2::text[]) AS n) s
