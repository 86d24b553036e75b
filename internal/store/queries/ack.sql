-- name: ConsumerEnsure :exec
-- Make sure every (partition, group) an ack touches has a row to lock; unknown partitions are skipped
-- (their acks resolve to nothing). Each partition is probed in a LATERAL subquery keyed by its row: as
-- a join, a generic plan built while partitions had been analyzed with no live row hashed the whole
-- table on every call (docs/performance.md, Known issue 16).
INSERT INTO partition_consumers (partition_id, consumer_group)
SELECT DISTINCT t.partition_id, t.consumer_group
FROM unnest($1::uuid[], $2::text[]) AS t(partition_id, consumer_group)
CROSS JOIN LATERAL (SELECT 1 FROM partitions p WHERE p.id = t.partition_id LIMIT 1) p
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

-- fragment: consumer_row_of_u
-- Which row of partition_consumers an UPDATE … FROM u changes: the one of u's (partition, group), for
-- AckApply, AckCompletions and AckLeases.
-- The partition as ANY over a one-element array: the same test as =, but one that cannot drive a hash or
-- merge join, so the plan is a nested loop probing partition_consumers_pkey by each row's keys. With
-- plain =, a generic plan built while the table looked empty hash-joined it against a full walk of
-- partition_consumers_group_idx. The group only in row bounds, as in ConsumerLock: an equality on it
-- (even as ANY) let a plan built on six consumer rows walk partition_consumers_group_idx instead.
WHERE pc.partition_id = ANY (ARRAY[u.partition_id])
  AND (pc.partition_id, pc.consumer_group) >= (u.partition_id, u.consumer_group)
  AND (pc.partition_id, pc.consumer_group) <= (u.partition_id, u.consumer_group)

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
{{consumer_row_of_u}}

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

-- fragment: forget_moved
-- AckCompletions' and AckLeases' forget: PendingForgetConsumed over the cursors upd moved. Neither
-- statement applies a batch with a retried dead letter, so the redeliveries are not looked at.
DELETE FROM pending_partitions pp
USING (
    SELECT u.partition_id, u.consumer_group
    FROM (SELECT * FROM upd ORDER BY 1) AS u
    CROSS JOIN LATERAL (
        SELECT 1 FROM partitions p
        WHERE p.id = u.partition_id AND p.last_seq <= u.cursor_seq
        FOR SHARE OF p SKIP LOCKED) p
    ORDER BY u.partition_id
) f
WHERE pp.partition_id = ANY (ARRAY[f.partition_id]) AND pp.consumer_group = ANY (ARRAY[f.consumer_group])

-- name: AckCompletions :many
-- The common ack in one autocommitted statement: every item is a completion ($1-$3 its partition, group
-- and transaction id; $4 its leaseId, NULL when not validated; $5 now, NULL: the database clock). It
-- applies the batch only when every item is a completion the full path (ConsumerLock, AckResolve, the
-- engine's decision, AckApply, PendingForgetConsumed) would accept without a redelivery: a message ahead
-- of the cursor delivered under the live lease given (or under any lease when none is given), or a
-- repeated completion behind it (noop). Otherwise it changes nothing and returns no row, and the engine
-- takes the full path, which answers the other cases.
--
-- The decision is made on the consumer rows as locked here (pc: FOR UPDATE in (partition, group) order,
-- like ConsumerLock, which returns the newest committed version after any wait), and the UPDATE below
-- only writes rows this statement holds, so no concurrent change can slip between the check and the
-- write. Messages are read with the statement's snapshot: a message pushed after it is not found, and
-- not found declines (the full path then looks again). Cursor moves within the batch follow the items'
-- order: an item moves the cursor when its seq is past the cursor and every earlier item of the same
-- (partition, group); otherwise it is a repeated completion.
--
-- Every hot table is read in a LATERAL subquery keyed by one row (see ConsumerLock, AckResolve,
-- AckApply and PendingForgetConsumed for why each form is plan-proof).
WITH t AS MATERIALIZED (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[]) WITH ORDINALITY
        AS t(partition_id, consumer_group, transaction_id, lease_id, i)
), pc AS MATERIALIZED (
    -- Per (partition, group) pair, not per item: the partition and queue names, and whether the group
    -- has a retried dead letter on the partition (any sends the batch to the full path), are the same
    -- for every item of a pair, and a batch is mostly one or two pairs of ten or more items each.
    SELECT pc.partition_id, pc.consumer_group, pc.cursor_seq, pc.lease_id,
           coalesce(pc.lease_expires_at > coalesce($5::timestamptz, now()), false) AS live,
           pc.claim_cursor_seq, pc.delivered_seq, pc.prev_lease_id, pc.prev_claim_cursor_seq, pc.prev_delivered_seq,
           p.name AS partition_name, q.name AS queue_name, rd.redelivery IS NOT NULL AS redelivery
    FROM (SELECT DISTINCT partition_id, consumer_group FROM t ORDER BY 1, 2) k
    CROSS JOIN LATERAL (
        SELECT * FROM partition_consumers pc
        WHERE pc.partition_id = k.partition_id
          AND (pc.partition_id, pc.consumer_group) >= (k.partition_id, k.consumer_group)
          AND (pc.partition_id, pc.consumer_group) <= (k.partition_id, k.consumer_group)
        LIMIT 1
        FOR UPDATE) pc
    LEFT JOIN LATERAL (SELECT p.name, p.queue_id FROM partitions p WHERE p.id = pc.partition_id LIMIT 1) p ON true
    LEFT JOIN LATERAL (SELECT q.name FROM queues q WHERE q.id = p.queue_id LIMIT 1) q ON true
    LEFT JOIN LATERAL (
        SELECT true AS redelivery FROM redeliveries r
        WHERE r.partition_id = pc.partition_id AND r.consumer_group = pc.consumer_group LIMIT 1) rd ON true
), leased AS MATERIALIZED (
    SELECT pc.partition_id, pc.consumer_group, m.seq, m.transaction_id
    FROM pc
    CROSS JOIN LATERAL (
        SELECT m.seq, m.transaction_id FROM messages m
        WHERE m.partition_id = pc.partition_id AND m.seq > pc.claim_cursor_seq AND m.seq <= pc.delivered_seq
        ORDER BY m.seq) m
), r AS MATERIALIZED (
    SELECT t.i, t.partition_id, t.consumer_group, t.lease_id, m.seq, pc.partition_name, pc.queue_name,
           coalesce(pc.redelivery, false) AS redelivery, pc.cursor_seq, pc.lease_id AS cur_lease_id, pc.live,
           pc.claim_cursor_seq, pc.delivered_seq, pc.prev_lease_id, pc.prev_claim_cursor_seq, pc.prev_delivered_seq
    FROM t
    LEFT JOIN pc ON pc.partition_id = t.partition_id AND pc.consumer_group = t.consumer_group
    LEFT JOIN leased l ON l.partition_id = t.partition_id AND l.consumer_group = t.consumer_group AND l.transaction_id = t.transaction_id
    LEFT JOIN LATERAL (
        SELECT l.seq WHERE l.seq IS NOT NULL
        UNION ALL
        -- Only for items outside the lease's range (repeated completions, acks without a lease of an
        -- older delivery): as in AckResolve, this lookup by key alone is the one read of messages a
        -- generic plan built on one-message partitions may make by partition_id alone.
        (SELECT m.seq FROM messages m
         WHERE l.seq IS NULL AND m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
         LIMIT 1)
    ) m ON true
), d AS MATERIALIZED (
    SELECT r.*, r.seq > greatest(r.cursor_seq, max(r.seq) OVER (PARTITION BY r.partition_id, r.consumer_group ORDER BY r.i
                                                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS moves
    FROM r
), e AS MATERIALIZED (
    SELECT d.i, d.partition_id, d.consumer_group, d.seq, d.partition_name, d.queue_name, d.moves,
           d.moves AND d.live AND d.seq >= d.delivered_seq AS release,
           coalesce(d.seq IS NOT NULL AND d.cursor_seq IS NOT NULL AND d.queue_name IS NOT NULL AND NOT d.redelivery AND
               CASE WHEN d.moves THEN
                   -- Ahead of the cursor: the live lease given, and a message it delivered; without a
                   -- lease, any message a pop of the group delivered.
                   d.seq <= d.delivered_seq AND (d.lease_id IS NULL OR (d.lease_id = d.cur_lease_id AND d.live AND d.seq > d.claim_cursor_seq))
               ELSE
                   -- Behind it: a repeated completion under the lease that delivered it, or without a lease.
                   d.lease_id IS NULL
                   OR (d.lease_id = d.cur_lease_id AND d.seq > d.claim_cursor_seq AND d.seq <= d.delivered_seq)
                   OR (d.lease_id = d.prev_lease_id AND d.seq > d.prev_claim_cursor_seq AND d.seq <= d.prev_delivered_seq)
               END, false) AS fits
    FROM d
), ok AS MATERIALIZED (
    -- A declined batch wrote nothing but its row locks, so its commit need not wait for the WAL flush.
    SELECT o.ok, CASE WHEN NOT o.ok THEN set_config('synchronous_commit', 'off', true) END AS commit_mode
    FROM (SELECT bool_and(e.fits) AS ok FROM e) o
), u AS MATERIALIZED (
    SELECT e.partition_id, e.consumer_group, max(e.seq) AS cursor_seq, bool_or(e.release) AS release, count(*) AS consumed
    FROM e
    WHERE e.moves AND (SELECT ok.ok FROM ok)
    GROUP BY e.partition_id, e.consumer_group
), upd AS (
    -- As AckApply, for completions: retries reset, retry_after kept.
    UPDATE partition_consumers pc SET
        cursor_seq        = u.cursor_seq,
        lease_expires_at  = CASE WHEN u.release THEN NULL ELSE pc.lease_expires_at END,
        batch_retry_count = 0,
        total_consumed    = pc.total_consumed + u.consumed,
        last_consumed_at  = coalesce($5::timestamptz, now())
    FROM u
    {{consumer_row_of_u}}
    RETURNING pc.partition_id, pc.consumer_group, pc.cursor_seq
), forget AS (
    -- As PendingForgetConsumed (the batch has no retried dead letter), after the cursors moved.
    {{forget_moved}}
)
SELECT e.i, e.seq, e.partition_name, e.queue_name, NOT e.moves AS noop, e.release
FROM e
WHERE (SELECT ok.ok FROM ok)
ORDER BY e.i

-- name: AckLeases :one
-- Whole leases completed, in one autocommitted statement: item k says that every message lease $3[k]
-- delivered on partition $1[k] to group $2[k], $4[k] of them, was completed, in the order delivered ($5
-- now, NULL: the database clock). The broker that answered the pop knows which messages those were
-- (engine, leaseMemo), so no message is looked up by transaction id: a lease id is minted for one
-- claim, and while the consumer row still holds it, unexpired, with its cursor where the claim found it
-- and as many messages delivered (and still stored), the claim's messages are the ones acked. It
-- applies the batch only when every item holds so, with no retried dead letter of the group on the
-- partition; the cursor then moves to the claim's last message and the lease ends, as AckCompletions
-- would do for the same items. Otherwise it changes nothing and answers false, and the engine takes
-- AckCompletions' path.
-- Consumer rows are locked FOR UPDATE in (partition, group) order, as ConsumerLock and AckCompletions
-- lock them; the lookups are LATERAL subqueries keyed by one row (see AckCompletions).
WITH t AS MATERIALIZED (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::int[]) AS t(partition_id, consumer_group, lease_id, cnt)
), pc AS MATERIALIZED (
    SELECT t.partition_id, t.consumer_group, pc.delivered_seq, pc.delivered_count,
           coalesce(pc.lease_id = t.lease_id AND pc.lease_expires_at > coalesce($5::timestamptz, now())
                    AND pc.cursor_seq = pc.claim_cursor_seq AND pc.delivered_count = t.cnt
                    AND rd.redelivery IS NULL AND ms.n = t.cnt, false) AS fits
    FROM (SELECT * FROM t ORDER BY partition_id, consumer_group) t
    LEFT JOIN LATERAL (
        SELECT * FROM partition_consumers pc
        WHERE pc.partition_id = t.partition_id
          AND (pc.partition_id, pc.consumer_group) >= (t.partition_id, t.consumer_group)
          AND (pc.partition_id, pc.consumer_group) <= (t.partition_id, t.consumer_group)
        LIMIT 1
        FOR UPDATE) pc ON true
    LEFT JOIN LATERAL (
        SELECT true AS redelivery FROM redeliveries r
        WHERE r.partition_id = t.partition_id AND r.consumer_group = t.consumer_group LIMIT 1) rd ON true
    -- The claim's messages are all still there (none deleted by the API or by retention meanwhile, which
    -- the full path answers per item). Counted in messages_pkey's order, the one index that reads
    -- only the claim's range (see AckCompletions' leased).
    LEFT JOIN LATERAL (
        SELECT count(*) AS n FROM (
            SELECT m.seq FROM messages m
            WHERE m.partition_id = pc.partition_id AND m.seq > pc.claim_cursor_seq AND m.seq <= pc.delivered_seq
            ORDER BY m.seq LIMIT t.cnt + 1) m) ms ON true
), ok AS MATERIALIZED (
    -- A declined batch wrote nothing but its row locks, so its commit need not wait for the WAL flush.
    SELECT o.ok, CASE WHEN NOT o.ok THEN set_config('synchronous_commit', 'off', true) END AS commit_mode
    FROM (SELECT bool_and(pc.fits) AS ok FROM pc) o
), upd AS (
    -- As AckCompletions' update, for a whole lease: retries reset, retry_after kept.
    UPDATE partition_consumers pc SET
        cursor_seq        = u.delivered_seq,
        lease_expires_at  = NULL,
        batch_retry_count = 0,
        total_consumed    = pc.total_consumed + u.delivered_count,
        last_consumed_at  = coalesce($5::timestamptz, now())
    FROM (SELECT * FROM pc WHERE (SELECT ok.ok FROM ok)) u
    {{consumer_row_of_u}}
    RETURNING pc.partition_id, pc.consumer_group, pc.cursor_seq
), forget AS (
    -- As PendingForgetConsumed (no retried dead letter is involved), after the cursors moved.
    {{forget_moved}}
)
SELECT coalesce((SELECT ok.ok FROM ok), false)
