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

-- name: PartitionBump :many
-- Runs after PartitionLock in the same transaction, so last_seq is current and stays ours, and no other
-- push can store a transactionId in these partitions until we commit. The broker has already dropped
-- rows repeating a (partition, transactionId) of an earlier row and numbered the rest per partition
-- 1..n ($1: the partitions, $2: their n). The rows themselves follow by MessageCopy: this statement
-- reserves their numbers and returns, per partition it found, the base (row k is base + k) and the
-- clock its rows carry; a partition it does not find (its queue was deleted) gets no rows.
-- $3-$6 (request index, partition, ordinal, transactionId) are the rows to look up first: their
-- stored transactionIds come back as request indices (base NULL), and those rows are left out of the
-- copy, leaving a gap in the numbering (the probe sees every committed push: this statement's snapshot
-- is taken after the locks were granted). Store.Push looks up none at first and relies on the unique
-- index instead (a duplicate fails the copy, and the push is redone with every row looked up); a push
-- inside a caller's transaction looks up the clients' ids.
-- The clock is taken under the lock, so created_at never decreases along a partition ($8: the broker's
-- clock when it has one, docs/decisions.md "One clock"; NULL: the database's).
WITH dup AS MATERIALIZED (
    -- A LATERAL probe with LIMIT 1 is one index lookup per row; an EXISTS here may be planned as a
    -- hashed subplan that reads the whole table. Its ORDER BY is the one the unique index returns
    -- unsorted: planned on a near-empty messages, a probe of messages_pkey by partition_id alone looks
    -- as cheap and would read the whole partition per row (docs/performance.md, Known issue 5).
    SELECT t.idx, t.partition_id, t.k
    FROM unnest($3::int[], $4::uuid[], $5::int[], $6::text[]) AS t(idx, partition_id, k, transaction_id)
    CROSS JOIN LATERAL (
        SELECT 1 FROM messages m
        WHERE m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
        ORDER BY m.partition_id, m.transaction_id
        LIMIT 1
    ) d
), counts AS (
    -- top: the highest ordinal that is stored, so that last_seq is the last stored seq.
    SELECT v.id, v.n - coalesce(x.dups, 0) AS n,
           CASE WHEN x.dups IS NULL THEN v.n
                ELSE (SELECT max(g.k) FROM generate_series(1, v.n) AS g(k) WHERE g.k <> ALL (x.ks)) END AS top
    FROM unnest($1::uuid[], $2::int[]) AS v(id, n)
    LEFT JOIN (SELECT partition_id, count(*) AS dups, array_agg(k) AS ks FROM dup GROUP BY partition_id) x ON x.partition_id = v.id
), bump AS (
    -- The partition as ANY over a one-element array, as in AckApply: the same test as =, but one that
    -- cannot drive a hash join. A generic plan built while partitions had been analyzed with no live row
    -- (after a queue's deletion, before a vacuum) hashed the whole table, read through partitions_pkey,
    -- on every push (docs/performance.md, Known issue 16).
    UPDATE partitions p SET last_seq = p.last_seq + c.top, last_push_at = coalesce($8::timestamptz, clock_timestamp()), message_count = p.message_count + c.n
    FROM counts c
    WHERE p.id = ANY (ARRAY[c.id]) AND c.n > 0
    RETURNING p.id, p.queue_id, p.last_seq - c.top AS base, p.last_push_at AS at
), pend AS (
    -- The partitions that receive messages have work for the queue-mode group ($7) and every group
    -- subscribed to their queue (0006_pending_partitions.sql). An existing row keeps its place in line
    -- and is not locked. The rows a partition has are read in one range of pending_partitions_pkey and
    -- only the missing groups are inserted: with N subscribed groups, an insert of every group with
    -- ON CONFLICT DO NOTHING made N probes of the index per pushed partition although the rows are
    -- almost always there. Reading them in this statement's snapshot is safe: a record is deleted only
    -- under a share lock of its partition row, which waited for our PartitionLock's, so no delete is in
    -- flight; a record inserted meanwhile by a pop or a subscription is left by ON CONFLICT.
    -- Each lookup is a LATERAL subquery ordered as its index returns it (LIMIT / ARRAY keep it from
    -- being flattened into a join): a generic plan built while these tables looked empty could otherwise
    -- hash all of queues, or walk pending_partitions_line_idx whole for one partition.
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT b.id, g.consumer_group, b.queue_id, coalesce($8::timestamptz, now()) + make_interval(secs => q.delayed_processing)
    FROM bump b
    CROSS JOIN LATERAL (SELECT q.delayed_processing FROM queues q WHERE q.id = b.queue_id ORDER BY q.id LIMIT 1) q
    CROSS JOIN LATERAL (
        SELECT ARRAY(SELECT pp.consumer_group FROM pending_partitions pp
                     WHERE pp.partition_id = b.id ORDER BY pp.partition_id, pp.consumer_group) AS have
        OFFSET 0 -- read once per partition: flattened, the read would be repeated for every group
    ) e
    CROSS JOIN LATERAL (
        SELECT $7::text AS consumer_group
        UNION ALL
        SELECT s.consumer_group FROM consumer_group_subscriptions s
        WHERE s.queue_id = b.queue_id AND s.consumer_group <> $7::text
    ) g
    WHERE g.consumer_group <> ALL (e.have)
    ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
)
SELECT b.id, b.base, b.at, NULL::int AS idx FROM bump b
UNION ALL
SELECT NULL, NULL, NULL, d.idx FROM dup d

-- name: MessageInsert :exec
-- The rows of a small push of the broker's own transaction, queued in the same pipelined batch as
-- PartitionLock, PartitionBump and the commit: the push is one round trip instead of three (the batch,
-- the copy, the commit), which for a few rows cost more than the rows (push_inline.go). It numbers and
-- stamps rows as MessageCopy's caller does, from what PartitionBump left on the locked partition row in
-- this transaction: row k of a partition pushing n is last_seq - n + k, created_at its last_push_at. A
-- partition PartitionBump did not find gets no rows. Only used when nothing is looked up first (so no
-- ordinal is skipped): a stored transactionId fails the unique index, and the push is redone by COPY.
-- Each partition is read once, through a LATERAL probe ordered as its index returns it (as in
-- PartitionBump): its row, just updated, heads a chain of versions a probe per pushed row would walk.
WITH base AS MATERIALIZED (
    SELECT c.id, p.last_seq - c.n AS base, p.last_push_at AS at
    FROM unnest($9::uuid[], $10::int[]) AS c(id, n)
    CROSS JOIN LATERAL (
        SELECT p.last_seq, p.last_push_at FROM partitions p
        WHERE p.id = c.id
        ORDER BY p.id
        LIMIT 1
    ) p
)
INSERT INTO messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at)
SELECT r.partition_id, b.base + r.k, r.id, r.transaction_id, r.trace_id, r.payload::jsonb, r.producer_sub, r.is_encrypted, b.at
FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::bool[])
     AS r(partition_id, k, id, transaction_id, trace_id, payload, producer_sub, is_encrypted)
JOIN base b ON b.id = r.partition_id

-- name: MessageCopy :copy
-- The numbered rows of a push, after PartitionBump in the same transaction, in PostgreSQL's binary
-- copy format (push_copy.go writes it). COPY stores rows several to a heap page and WAL record and
-- skips the executor's per-row work: with the bump split out, PostgreSQL spends less per pushed row
-- than on a plain multi-row INSERT of the same rows (bench -push-sql, docs/performance.md).
COPY messages (partition_id, seq, id, transaction_id, trace_id, payload, producer_sub, is_encrypted, created_at) FROM STDIN (FORMAT binary)

-- name: MessageExistingIDs :many
SELECT t.idx, m.id
FROM unnest($1::int[], $2::uuid[], $3::text[]) AS t(idx, partition_id, transaction_id)
JOIN messages m ON m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id

-- name: QueueNotify :exec
-- Its own transaction (never a push's or an ack's: NOTIFY serialises commits on a global lock), with
-- an asynchronous commit: a NOTIFY gets a transaction id, so a synchronous commit would wait for a WAL
-- flush, up to every few milliseconds per broker beside the pushes' commits, to make durable a
-- notification that a crash loses anyway (listeners re-check after every reconnect).
SELECT pg_notify($1, n), set_config('synchronous_commit', 'off', true) FROM (SELECT DISTINCT unnest($2::text[]) AS n) s
