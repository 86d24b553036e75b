-- name: PartitionLock :exec
-- Taken in id order by every pushing transaction, so concurrent batches never deadlock, and held to
-- commit, so sequence numbers are handed out in commit order. NO KEY UPDATE (what the last_seq update
-- takes anyway) leaves the FOR KEY SHARE of foreign-key checks free: pops and acks inserting consumer
-- rows for these partitions never wait on a push.
SELECT id FROM partitions WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE

-- name: MessageInsert :many
-- Runs after LockPartitions in the same transaction, so last_seq is current and stays ours.
-- Items repeating a transactionId inside the batch keep only the first; ON CONFLICT drops those already
-- stored. Returns the request indices of the rows actually inserted.
WITH input AS (
    SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::uuid[], $5::uuid[], $6::jsonb[], $7::text[], $8::bool[])
        AS t(idx, partition_id, transaction_id, id, trace_id, payload, producer_sub, is_encrypted)
), firsts AS (
    SELECT DISTINCT ON (partition_id, transaction_id) *
    FROM input
    ORDER BY partition_id, transaction_id, idx
), numbered AS (
    SELECT f.*, p.last_seq + row_number() OVER (PARTITION BY f.partition_id ORDER BY f.idx) AS seq
    FROM firsts f JOIN partitions p ON p.id = f.partition_id
), ins AS (
    INSERT INTO messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at)
    SELECT partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, coalesce($10::timestamptz, clock_timestamp())
    FROM numbered
    ORDER BY partition_id, seq
    ON CONFLICT (partition_id, transaction_id) DO NOTHING
    RETURNING partition_id, seq, created_at
), bump AS (
    UPDATE partitions p SET last_seq = m.max_seq, last_push_at = m.max_at, message_count = p.message_count + m.n
    FROM (SELECT partition_id, max(seq) AS max_seq, max(created_at) AS max_at, count(*) AS n
          FROM ins GROUP BY partition_id) m
    WHERE p.id = m.partition_id
), pend AS (
    -- The partitions that received messages have work for the queue-mode group ($9) and every group
    -- subscribed to their queue (0006_pending_partitions.sql). An existing row keeps its place in line
    -- and is not locked.
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT t.partition_id, g.consumer_group, p.queue_id, coalesce($10::timestamptz, now()) + make_interval(secs => q.delayed_processing)
    FROM (SELECT DISTINCT partition_id FROM ins) t
    JOIN partitions p ON p.id = t.partition_id
    JOIN queues q ON q.id = p.queue_id
    CROSS JOIN LATERAL (
        SELECT $9::text AS consumer_group
        UNION ALL
        SELECT s.consumer_group FROM consumer_group_subscriptions s WHERE s.queue_id = p.queue_id AND s.consumer_group <> $9::text
    ) g
    ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
)
SELECT n.idx FROM ins JOIN numbered n ON n.partition_id = ins.partition_id AND n.seq = ins.seq

-- name: MessageExistingIDs :many
SELECT t.idx, m.id
FROM unnest($1::int[], $2::uuid[], $3::text[]) AS t(idx, partition_id, transaction_id)
JOIN messages m ON m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id

-- name: QueueNotify :exec
SELECT pg_notify($1, n) FROM (SELECT DISTINCT unnest($2::text[]) AS n) s
