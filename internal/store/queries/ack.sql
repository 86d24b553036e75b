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
FROM partition_consumers pc
JOIN (SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[])) AS t(partition_id, consumer_group)
  ON pc.partition_id = t.partition_id AND pc.consumer_group = t.consumer_group
ORDER BY pc.partition_id, pc.consumer_group
FOR UPDATE OF pc

-- name: AckResolve :many
SELECT t.i, m.seq, p.name, q.name, q.retry_limit, q.retry_delay,
       EXISTS (SELECT 1 FROM redeliveries r
               WHERE r.partition_id = m.partition_id AND r.consumer_group = t.consumer_group AND r.seq = m.seq)
FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS t(partition_id, transaction_id, consumer_group, i)
JOIN messages m ON m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
JOIN partitions p ON p.id = m.partition_id
JOIN queues q ON q.id = p.queue_id

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
WHERE pc.partition_id = u.partition_id AND pc.consumer_group = u.consumer_group

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
    SELECT u.partition_id, u.consumer_group
    FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS u(partition_id, consumer_group, cursor_seq)
    JOIN partitions p ON p.id = u.partition_id
    WHERE p.last_seq <= u.cursor_seq
      AND NOT EXISTS (SELECT 1 FROM redeliveries r WHERE r.partition_id = u.partition_id AND r.consumer_group = u.consumer_group)
    ORDER BY u.partition_id
    FOR SHARE OF p SKIP LOCKED
) d
WHERE pp.partition_id = d.partition_id AND pp.consumer_group = d.consumer_group
