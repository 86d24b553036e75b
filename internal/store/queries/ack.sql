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
-- Each row is locked in a LATERAL subquery keyed by the sorted input, so the locks are still taken in
-- (partition, group) order (LIMIT 1 is exact on the primary key and keeps the subquery unflattened). The
-- group appears only inside row bounds on the primary key's columns, so partition_consumers_pkey is the
-- one index with a condition it can use: with an equality on consumer_group, a plan built while the
-- statistics said each group had a row or two could walk partition_consumers_group_idx, every row of
-- the group. The plain join before that, planned generically while the table looked empty, walked the
-- whole index.
FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[]) ORDER BY 1, 2) AS t(partition_id, consumer_group)
CROSS JOIN LATERAL (
    SELECT * FROM partition_consumers pc
    WHERE pc.partition_id = t.partition_id
      AND (pc.partition_id, pc.consumer_group) >= (t.partition_id, t.consumer_group)
      AND (pc.partition_id, pc.consumer_group) <= (t.partition_id, t.consumer_group)
    LIMIT 1
    FOR UPDATE) pc
ORDER BY pc.partition_id, pc.consumer_group

-- name: AckResolve :many
-- messages is read within the range each (partition, group) lease delivered first, once per pair in one
-- range of messages_pkey (the ack of messages just popped: nearly every ack), and by key alone only for
-- the items that finds nothing (a retried dead letter, an ack without a lease or after its lease moved
-- on). A lookup by (partition_id, transaction_id) alone is exposed to the statistics: when they say each
-- partition holds about one message (after a vacuum, or while a queue of many partitions was being
-- deleted), messages_pkey (partition_id, seq) looks as cheap as the unique (partition_id,
-- transaction_id) index, and the smaller one wins; that plan read the whole partition for every acked
-- message (docs/performance.md Known issue 12). The lease's read is ordered by seq, which only
-- messages_pkey returns without a Sort, so the larger unique index (which could use partition_id alone)
-- never looks cheaper. Every other table is read in a LATERAL subquery keyed by one row, so each row is
-- a few index probes whatever the statistics said when the generic plan was built; LIMIT 1 is exact (the
-- lookups are unique) and keeps the subqueries from being flattened into ordinary joins.
WITH t AS MATERIALIZED (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS t(partition_id, transaction_id, consumer_group, i)
), leased AS MATERIALIZED (
    SELECT k.partition_id, k.consumer_group, m.seq, m.transaction_id
    FROM (SELECT DISTINCT partition_id, consumer_group FROM t) k
    -- The group's row by ConsumerLock's form of its key.
    CROSS JOIN LATERAL (
        SELECT pc.claim_cursor_seq, pc.delivered_seq FROM partition_consumers pc
        WHERE pc.partition_id = k.partition_id
          AND (pc.partition_id, pc.consumer_group) >= (k.partition_id, k.consumer_group)
          AND (pc.partition_id, pc.consumer_group) <= (k.partition_id, k.consumer_group)
        LIMIT 1) pc
    CROSS JOIN LATERAL (
        SELECT m.seq, m.transaction_id FROM messages m
        WHERE m.partition_id = k.partition_id AND m.seq > pc.claim_cursor_seq AND m.seq <= pc.delivered_seq
        ORDER BY m.seq) m
)
SELECT t.i, m.seq, p.name, q.name, q.retry_limit, q.retry_delay, r.redelivered IS NOT NULL
FROM t
LEFT JOIN leased l ON l.partition_id = t.partition_id AND l.consumer_group = t.consumer_group AND l.transaction_id = t.transaction_id
CROSS JOIN LATERAL (
    SELECT l.seq WHERE l.seq IS NOT NULL
    UNION ALL
    (SELECT m.seq FROM messages m
     WHERE l.seq IS NULL AND m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
     LIMIT 1)
) m
CROSS JOIN LATERAL (SELECT p.name, p.queue_id FROM partitions p WHERE p.id = t.partition_id LIMIT 1) p
CROSS JOIN LATERAL (SELECT q.name, q.retry_limit, q.retry_delay FROM queues q WHERE q.id = p.queue_id LIMIT 1) q
-- Not an EXISTS in the select list: that may run as a hashed subplan reading all of redeliveries.
LEFT JOIN LATERAL (
    SELECT true AS redelivered FROM redeliveries r
    WHERE r.partition_id = t.partition_id AND r.consumer_group = t.consumer_group AND r.seq = m.seq LIMIT 1) r ON true

-- name: AckApply :exec
UPDATE partition_consumers pc SET
    cursor_seq        = u.cursor_seq,
    lease_expires_at  = CASE WHEN u.release THEN NULL ELSE pc.lease_expires_at END,
    batch_retry_count = u.retries,
    retry_after       = CASE WHEN u.delay_ms > 0 THEN coalesce($8::timestamptz, now()) + u.delay_ms * interval '1 millisecond' ELSE pc.retry_after END,
    total_consumed    = pc.total_consumed + u.consumed,
    last_consumed_at  = CASE WHEN u.consumed > 0 THEN coalesce($8::timestamptz, now()) ELSE pc.last_consumed_at END
FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::bool[], $5::int[], $6::int[], $7::int[])
    AS u(partition_id, consumer_group, cursor_seq, release, retries, delay_ms, consumed)
-- The partition as ANY over a one-element array: the same test as =, but one that cannot drive a hash or
-- merge join, so the plan is a nested loop probing partition_consumers_pkey by each row's keys. With
-- plain =, a generic plan built while the table looked empty hash-joined it against a full walk of
-- partition_consumers_group_idx. The group only in row bounds, as in ConsumerLock: an equality on it
-- (even as ANY) let a plan built on six consumer rows walk partition_consumers_group_idx instead.
WHERE pc.partition_id = ANY (ARRAY[u.partition_id])
  AND (pc.partition_id, pc.consumer_group) >= (u.partition_id, u.consumer_group)
  AND (pc.partition_id, pc.consumer_group) <= (u.partition_id, u.consumer_group)

-- name: DeadLetterInsert :exec
INSERT INTO dead_letters (id, partition_id, message_seq, message_id, transaction_id, consumer_group,
                          error_message, retry_count, original_created_at, failed_at)
SELECT gen_random_uuid(), t.partition_id, m.seq, m.id, m.transaction_id, t.consumer_group, t.error, t.retries, m.created_at,
       coalesce($6::timestamptz, now())
FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::int[]) AS t(partition_id, seq, consumer_group, error, retries)
-- The message by a one-row range in seq order, as Pop reads a redelivery (queries/pop.sql says why).
CROSS JOIN LATERAL (SELECT m.* FROM messages m
                    WHERE m.partition_id = t.partition_id AND m.seq >= t.seq AND m.seq <= t.seq
                    ORDER BY m.seq LIMIT 1) m
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
-- The partition is probed (and locked) in a LATERAL subquery keyed by the input row, and the deleted rows
-- are matched with ANY over one-element arrays (see AckApply: a nested loop probing the primary key by each
-- row's keys): a generic plan built while these tables
-- looked empty read all of pending_partitions (or all of partitions) per call before. The input is
-- sorted before the probes (and d keeps its ORDER BY, which also keeps it from being merged into the
-- DELETE's join) so that the partitions are still share-locked in id order.
DELETE FROM pending_partitions pp
USING (
    SELECT u.partition_id, u.consumer_group
    FROM (SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[]) ORDER BY 1) AS u(partition_id, consumer_group, cursor_seq)
    CROSS JOIN LATERAL (
        SELECT 1 FROM partitions p
        WHERE p.id = u.partition_id AND p.last_seq <= u.cursor_seq
          AND NOT EXISTS (SELECT 1 FROM redeliveries r WHERE r.partition_id = u.partition_id AND r.consumer_group = u.consumer_group)
        FOR SHARE OF p SKIP LOCKED) p
    ORDER BY u.partition_id
) d
WHERE pp.partition_id = ANY (ARRAY[d.partition_id]) AND pp.consumer_group = ANY (ARRAY[d.consumer_group])
