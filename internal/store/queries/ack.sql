-- name: ConsumerEnsure :exec
-- Make sure every (partition, group) an ack touches has a row to lock; unknown partitions are skipped
-- (their acks resolve to nothing).
INSERT INTO partition_consumers (partition_id, consumer_group)
SELECT DISTINCT t.partition_id, t.consumer_group
FROM unnest($1::uuid[], $2::text[]) AS t(partition_id, consumer_group)
JOIN partitions p ON p.id = t.partition_id
ORDER BY 1, 2
ON CONFLICT (partition_id, consumer_group) DO NOTHING

-- name: ConsumerLock :many
-- Locked in (partition, group) order so concurrent ack batches cannot deadlock. The partition's last_seq
-- (not locked: it only grows) tells the ack whether a cursor can have reached the end of its partition,
-- i.e. whether PendingForgetConsumed can have anything to delete.
SELECT pc.partition_id, pc.consumer_group, pc.cursor_seq, pc.lease_id,
       coalesce(pc.lease_expires_at > coalesce($3::timestamptz, now()), false) AS lease_live,
       pc.claim_cursor_seq, pc.delivered_seq, pc.prev_lease_id, pc.prev_claim_cursor_seq, pc.prev_delivered_seq,
       pc.batch_retry_count,
       (SELECT count(*) FROM redeliveries r
         WHERE r.partition_id = pc.partition_id AND r.consumer_group = pc.consumer_group
           AND r.seq <= pc.delivered_seq) AS redeliveries,
       (SELECT p.last_seq FROM partitions p WHERE p.id = pc.partition_id) AS last_seq
-- Each row is locked by a key lookup of its own (a LATERAL with its own FOR UPDATE is never flattened
-- into a join): a generic plan built while the tables were small merge-joined the keys with a walk of the
-- whole partition_consumers index.
FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[]) ORDER BY 1, 2) AS t(partition_id, consumer_group)
CROSS JOIN LATERAL (
    SELECT * FROM partition_consumers pc
    WHERE pc.partition_id = t.partition_id AND pc.consumer_group = t.consumer_group
    FOR UPDATE
) pc
ORDER BY pc.partition_id, pc.consumer_group

-- name: AckResolve :many
-- The redeliveries probe is a scalar subquery, not EXISTS, which the planner may answer from a hash of
-- the whole table.
SELECT t.i, m.seq, p.name, q.name, q.retry_limit, q.retry_delay,
       coalesce((SELECT true FROM redeliveries r
                 WHERE r.partition_id = m.partition_id AND r.consumer_group = t.consumer_group AND r.seq = m.seq
                 LIMIT 1), false)
FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS t(partition_id, transaction_id, consumer_group, i)
-- One key lookup per acked message (the fenced LATERAL cannot become a join): a generic plan built while
-- the tables were small hash-joined the keys with a walk of the whole messages index.
CROSS JOIN LATERAL (
    SELECT m.partition_id, m.seq FROM messages m
    WHERE m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
    OFFSET 0
) m
CROSS JOIN LATERAL (SELECT p.name, p.queue_id FROM partitions p WHERE p.id = m.partition_id OFFSET 0) p
CROSS JOIN LATERAL (SELECT q.name, q.retry_limit, q.retry_delay FROM queues q WHERE q.id = p.queue_id OFFSET 0) q

-- name: AckApply :exec
UPDATE partition_consumers pc SET
    cursor_seq        = u.cursor_seq,
    lease_expires_at  = CASE WHEN u.release THEN NULL ELSE pc.lease_expires_at END,
    batch_retry_count = u.retries,
    retry_after       = CASE WHEN u.delay_ms > 0 THEN coalesce($8::timestamptz, now()) + u.delay_ms * interval '1 millisecond' ELSE pc.retry_after END,
    total_consumed    = pc.total_consumed + u.consumed,
    last_consumed_at  = CASE WHEN u.consumed > 0 THEN coalesce($8::timestamptz, now()) ELSE pc.last_consumed_at END
FROM (
    -- Each row found by a key lookup of its own and updated by its address (ConsumerLock holds it, so the
    -- address is stable): a generic plan built while the tables were small hash-joined the keys with a
    -- walk of the whole partition_consumers index.
    SELECT u.*, x.ctid AS row_tid
    FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::bool[], $5::int[], $6::int[], $7::int[])
        AS u(partition_id, consumer_group, cursor_seq, release, retries, delay_ms, consumed)
    CROSS JOIN LATERAL (
        SELECT pc2.ctid FROM partition_consumers pc2
        WHERE pc2.partition_id = u.partition_id AND pc2.consumer_group = u.consumer_group
        OFFSET 0
    ) x
) u
WHERE pc.ctid = u.row_tid

-- name: DeadLetterInsert :exec
INSERT INTO dead_letters (id, partition_id, message_seq, message_id, transaction_id, consumer_group,
                          error_message, retry_count, original_created_at, failed_at)
SELECT gen_random_uuid(), t.partition_id, m.seq, m.id, m.transaction_id, t.consumer_group, t.error, t.retries, m.created_at,
       coalesce($6::timestamptz, now())
FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::int[]) AS t(partition_id, seq, consumer_group, error, retries)
JOIN messages m ON m.partition_id = t.partition_id AND m.seq = t.seq
ON CONFLICT (partition_id, transaction_id, consumer_group) DO UPDATE
    SET error_message = EXCLUDED.error_message, retry_count = EXCLUDED.retry_count, failed_at = coalesce($6::timestamptz, now())

-- name: RedeliveryDelete :exec
DELETE FROM redeliveries r
USING unnest($1::uuid[], $2::text[], $3::bigint[]) AS t(partition_id, consumer_group, seq)
WHERE r.partition_id = t.partition_id AND r.consumer_group = t.consumer_group AND r.seq = t.seq

-- name: PendingForgetConsumed :exec
-- Drops the pending-work records (0006_pending_partitions.sql) of the (partition, group) pairs whose cursor
-- now covers everything stored, with no retried dead letter left. The partition is share-locked first
-- and skipped when a push holds it: that push is adding work, and one that comes later waits for this
-- transaction and then inserts a fresh record.
DELETE FROM pending_partitions pp
USING (
    -- The partition row is locked by a key lookup of its own (a LATERAL with its own locking clause is
    -- never flattened into a join): a generic plan built while the tables were small merge-joined the
    -- keys with a walk of the whole partitions index. The redeliveries probe is a scalar subquery for
    -- the same reason (an EXISTS may become a hash of the whole table).
    SELECT u.partition_id, u.consumer_group
    FROM (SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[]) ORDER BY 1) AS u(partition_id, consumer_group, cursor_seq)
    CROSS JOIN LATERAL (
        SELECT p.id FROM partitions p
        WHERE p.id = u.partition_id AND p.last_seq <= u.cursor_seq
        FOR SHARE SKIP LOCKED
    ) p
    WHERE (SELECT true FROM redeliveries r
           WHERE r.partition_id = u.partition_id AND r.consumer_group = u.consumer_group LIMIT 1) IS NULL
) d
WHERE pp.partition_id = d.partition_id AND pp.consumer_group = d.consumer_group
