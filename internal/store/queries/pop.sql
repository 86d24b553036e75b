-- name: Pop :many
-- One statement claims up to $4 partitions of queue $1 for group $2 and reads up to $5 messages (a global
-- budget, in claim order) after each partition's cursor.
--   $3 partition name, NULL for any; $6 an id the broker minted, whose last 8 bytes end the lease id (see
--   lease; every row returns the lease id); $7 autoAck; $8 now (NULL: the database clock).
-- Candidates of a wildcard pop come from the group's line of partitions with pending work
-- (pending_partitions, 0006_pending_partitions.sql), front first; those leased, in a retry delay or inside
-- the window buffer are skipped, and the walk stops as soon as $4 partitions are locked, so its cost
-- follows the batch and the partitions claimed, not the size of the queue. The line's order is the
-- rotation: a claim sends the partition to the back, so none starves. Contended candidates are skipped
-- (try-lock), never waited on. The upsert takes the lease only if it is still free and the cursor is
-- still the one the messages were read after (claim_cursor_seq); a partition lost to a concurrent pop or
-- ack is simply not returned.
-- The statement is its own transaction (autocommit). Unless autoAck, q also turns synchronous_commit off
-- for that transaction: a claim's commit need not wait for its WAL flush (see Store.Pop). q is read by
-- every path of the statement, so the setting is made before anything is written; a queue that does not
-- exist claims nothing, and then there is nothing to commit.
-- Variants: a text between /*[tag*/ and /*]*/ is part of the statement only for the pops that need it
-- (Store.Pop runs the variant of its PopParams, see popShape); in /*[tag*/ A /*|B]*/, B replaces A for
-- the others. Tags: autoack (the cleanup of autoAck: done, redelivered), multi (more than one partition
-- may be claimed: the global budget and claim order, claimed_rest, the lease's head and list, the joins
-- to claimed), named (the named-partition candidate) and one (at most one partition is claimed).
-- PostgreSQL initialises every node of a plan on every execution, run or not: these parts were over a
-- third of the plan of the common pop (wildcard, one partition, no autoAck), which ran none of them,
-- and the joins to claimed built hash tables for a row or two. This text as it stands (every tag, no
-- alternative) is a correct statement too, and is what the query tests prepare.
WITH RECURSIVE q AS (
    SELECT id, CASE WHEN lease_time > 0 THEN lease_time ELSE 60 END AS lease_time,
           delayed_processing, window_buffer,
           CASE WHEN NOT $7 THEN set_config('synchronous_commit', 'off', true) END AS commit_mode
    FROM queues WHERE name = $1
), line AS (
    -- The group's line, walked one index step at a time and only as far as the pop reads it (a plain
    -- ORDER BY would let the planner sort the whole line first). The group and the tie-break are named
    -- as pending_partitions_line_idx holds them (the "C" collation, uuid_send: 0017_line_index_collation.sql),
    -- forms the primary key cannot serve: a plan built while the table looked empty walked the whole
    -- primary key by consumer_group at every step instead.
    (SELECT pp.ready_at, pp.partition_id
     FROM pending_partitions pp
     WHERE $3::text IS NULL AND pp.queue_id = (SELECT id FROM q) AND pp.consumer_group = $2::text COLLATE "C" AND pp.ready_at <= coalesce($8::timestamptz, now())
     ORDER BY pp.ready_at, uuid_send(pp.partition_id)
     LIMIT 1)
    UNION ALL
    SELECT nx.ready_at, nx.partition_id
    FROM line l
    CROSS JOIN LATERAL (
        SELECT pp.ready_at, pp.partition_id
        FROM pending_partitions pp
        WHERE pp.queue_id = (SELECT id FROM q) AND pp.consumer_group = $2::text COLLATE "C" AND pp.ready_at <= coalesce($8::timestamptz, now())
          AND (pp.ready_at, uuid_send(pp.partition_id)) > (l.ready_at, uuid_send(l.partition_id))
        ORDER BY pp.ready_at, uuid_send(pp.partition_id)
        LIMIT 1
    ) nx
), ids AS (
    -- The candidates, in claim order: the line (wildcard pop) or the named partition; only one side is
    -- ever non-empty, so both go through the one claimability test below.
    SELECT l.partition_id FROM line l
    /*[named*/UNION ALL
    SELECT p.id FROM partitions p WHERE p.queue_id = (SELECT id FROM q) AND p.name = $3::text/*]*/
), cand AS (
    SELECT x.*
    FROM ids i
    CROSS JOIN LATERAL (
        SELECT p.id, p.name, coalesce(pc.cursor_seq, 0) AS cursor_seq, coalesce(pc.batch_retry_count, 0) AS retries,
               p.last_seq
        FROM q
        JOIN partitions p ON p.id = i.partition_id
        LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = $2
        -- The redeliveries probe is a scalar subquery, not EXISTS: the planner may turn an EXISTS under OR
        -- into one hash of every retried dead letter of the group, read by consumer_group alone.
        WHERE (p.last_seq > coalesce(pc.cursor_seq, 0)
               OR (SELECT true FROM redeliveries r WHERE r.partition_id = p.id AND r.consumer_group = $2 LIMIT 1))
          AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($8::timestamptz, now()))
          AND (pc.retry_after IS NULL OR pc.retry_after <= coalesce($8::timestamptz, now()))
          AND (q.window_buffer = 0 OR p.last_push_at <= coalesce($8::timestamptz, now()) - make_interval(secs => q.window_buffer))
        OFFSET 0
    ) x
), locked AS (
    SELECT c.*, /*[multi*/row_number() OVER ()/*|1::bigint]*/ AS claim_order
    FROM (
        -- OFFSET 0 keeps the try-lock out of the candidate scan: pushed down, it would lock every
        -- partition the scan reads, not just those taken.
        SELECT * FROM (SELECT * FROM cand OFFSET 0) c
        WHERE pg_try_advisory_xact_lock(hashtextextended(c.id::text || '/' || $2, 0))
        LIMIT $4
    ) c
), msgs AS (
    SELECT l.id AS partition_id, l.name AS partition_name, l.cursor_seq, l.retries, l.claim_order, l.last_seq,
           m.seq, m.id, m.transaction_id, m.trace_id, m.payload, m.producer_sub, m.is_encrypted, m.created_at
    FROM locked l
    CROSS JOIN q
    CROSS JOIN LATERAL (
        -- Two index range reads, not one OR: an OR with the redeliveries would stop the cursor bound
        -- from limiting the scan of the (partition_id, seq) key, and every pop would read the whole
        -- partition from its first message.
        SELECT * FROM (
            (SELECT m.* FROM messages m
             WHERE m.partition_id = l.id AND m.seq > l.cursor_seq
             ORDER BY m.seq
             LIMIT $5)
            UNION ALL
            -- The redelivered message by a one-row range in seq order, not m.seq = r.seq: with both
            -- columns pinned by equalities, statistics that give a partition about one message tie
            -- messages_pkey with the unique (partition_id, transaction_id) index, and a plan on the
            -- latter read the whole partition for each message. Only messages_pkey yields seq order.
            (SELECT m.* FROM redeliveries r
             CROSS JOIN LATERAL (SELECT m.* FROM messages m
                                 WHERE m.partition_id = r.partition_id AND m.seq >= r.seq AND m.seq <= r.seq
                                 ORDER BY m.seq LIMIT 1) m
             WHERE r.partition_id = l.id AND r.consumer_group = $2)
        ) m
        WHERE q.delayed_processing = 0 OR m.created_at <= coalesce($8::timestamptz, now()) - make_interval(secs => q.delayed_processing)
        ORDER BY m.seq
        LIMIT $5
    ) m
), kept AS (
    -- The budget of $5 messages is global, in claim order; one partition's read is already capped.
    SELECT * FROM msgs /*[multi*/ORDER BY claim_order, seq LIMIT $5/*]*/
), agg AS (
    -- One row per partition with messages to deliver. With one partition at most, that is its locked
    -- row if kept has any: a plain aggregate, where GROUP BY built a hash table for the one group.
    /*[multi*/SELECT partition_id, min(cursor_seq) AS cursor_seq, max(seq) AS upto, count(*) AS cnt, max(last_seq) AS last_seq
    FROM kept GROUP BY partition_id/*|
    SELECT l.id AS partition_id, l.cursor_seq, k.upto, k.cnt, l.last_seq
    FROM locked l CROSS JOIN (SELECT max(seq) AS upto, count(*) AS cnt FROM kept) k
    WHERE k.cnt > 0]*/
), lease AS (
    -- The lease id tells where to find the lease again without an index on lease_id (a claim must not
    -- change an indexed column: 0013_lease_lookup.sql): its first 8 bytes are those of the lowest
    -- partition id to claim (the head), the other 8 those of the id the broker minted ($6, random there).
    -- The head's row lists the partitions of a multi-partition pop (lease.sql).
    SELECT h.partition_id AS head,
           encode(substring(uuid_send(h.partition_id) FROM 1 FOR 8) || substring(uuid_send($6::uuid) FROM 9 FOR 8),
                  'hex')::uuid AS id,
           /*[multi*/(SELECT CASE WHEN count(*) > 1 THEN array_agg(a.partition_id ORDER BY a.partition_id) END FROM agg a)/*|NULL::uuid[]]*/ AS parts
    FROM /*[multi*/(SELECT a.partition_id FROM agg a ORDER BY a.partition_id LIMIT 1)/*|agg]*/ h
), claim AS (
    SELECT a.partition_id, a.partition_id = l.head AS is_head,
           CASE WHEN $7 THEN greatest(a.upto, a.cursor_seq) ELSE a.cursor_seq END AS cursor_seq,
           a.cursor_seq AS claim_cursor_seq,
           l.id AS lease_id,
           CASE WHEN $7 THEN NULL ELSE coalesce($8::timestamptz, now()) + make_interval(secs => q.lease_time) END AS lease_expires_at,
           a.upto AS delivered_seq, a.cnt AS delivered_count,
           CASE WHEN $7 THEN a.cnt ELSE 0 END AS total_consumed,
           CASE WHEN $7 THEN coalesce($8::timestamptz, now()) END AS last_consumed_at,
           CASE WHEN a.partition_id = l.head THEN l.parts END AS lease_partitions
    FROM agg a CROSS JOIN q CROSS JOIN lease l
), claimed_head AS (
    -- The head first, then the others only if the head was claimed (claimed_rest): a lease must be
    -- findable from its id whenever its pop claimed anything. Both in partition id order, the lock
    -- order of acks: concurrent pops and acks cannot deadlock.
    {{claim_insert}}
    FROM claim c /*[multi*/WHERE c.is_head/*]*/
    {{claim_upsert}}
    RETURNING partition_id
/*[multi*/), claimed_rest AS (
    -- The same upsert as claimed_head's, of the other partitions.
    {{claim_insert}}
    FROM claim c WHERE NOT c.is_head AND EXISTS (SELECT 1 FROM claimed_head)
    ORDER BY c.partition_id
    {{claim_upsert}}
    RETURNING partition_id/*]*/
), claimed AS (
    SELECT partition_id FROM claimed_head /*[multi*/UNION ALL SELECT partition_id FROM claimed_rest/*]*/
), turn AS (
    -- A claimed partition goes to the back of its group's line (unless autoAck consumed it to its end:
    -- see done). last_seq is the one cand read, in this statement's snapshot.
    -- An upsert, not an UPDATE joined to claimed: its conflict check is a lookup of the primary key by
    -- both columns whatever the statistics say, while the generic plan of the join, built when the tables
    -- were small, scanned a whole index of pending_partitions on consumer_group alone (every row of every
    -- queue). A record an ack dropped in between comes back: a record may outlive its work (0006).
    INSERT INTO pending_partitions AS pp (partition_id, consumer_group, queue_id, ready_at)
    SELECT a.partition_id, $2, q.id, coalesce($8::timestamptz, now())
    FROM agg a CROSS JOIN q
    WHERE /*[multi*/a.partition_id IN (SELECT c.partition_id FROM claimed c)/*|EXISTS (SELECT FROM claimed)]*/
      AND NOT ($7 AND greatest(a.upto, a.cursor_seq) >= a.last_seq)
    /*[multi*/ORDER BY a.partition_id/*]*/
    ON CONFLICT (partition_id, consumer_group) DO UPDATE SET ready_at = EXCLUDED.ready_at
/*[autoack*/), done AS (
    -- autoAck consumed these partitions to their end: their records go, under the share lock that keeps
    -- a concurrent push out (a partition a push holds is skipped: it is getting new work).
    -- The last_seq test reads the locked partition row (p), not the snapshot's: a push that committed
    -- since keeps the record. The records are found one key lookup per partition (a fenced LATERAL, for
    -- the reason given at turn) and deleted by row address; one changed meanwhile is left, which a
    -- record may be (0006).
    DELETE FROM pending_partitions pp
    WHERE $7 AND pp.ctid = ANY (ARRAY(
          SELECT x.ctid
          FROM (SELECT p.id
                FROM (SELECT c.partition_id, greatest(a.upto, a.cursor_seq) AS upto
                      FROM claimed c JOIN agg a ON a.partition_id = c.partition_id
                      WHERE $7 ORDER BY c.partition_id) c
                CROSS JOIN LATERAL (SELECT p.id FROM partitions p
                                    WHERE p.id = c.partition_id AND p.last_seq <= c.upto
                                    FOR SHARE SKIP LOCKED) p
                WHERE (SELECT true FROM redeliveries r
                       WHERE r.partition_id = p.id AND r.consumer_group = $2
                         AND NOT EXISTS (SELECT 1 FROM kept k WHERE k.partition_id = r.partition_id AND k.seq = r.seq)
                       LIMIT 1) IS NULL) d
          CROSS JOIN LATERAL (SELECT pp2.ctid FROM pending_partitions pp2
                              WHERE pp2.partition_id = d.id AND pp2.consumer_group = $2
                              ORDER BY pp2.partition_id, pp2.consumer_group LIMIT 1) x))
), redelivered AS (
    -- autoAck consumes retried dead letters at delivery
    DELETE FROM redeliveries r
    WHERE $7 AND r.consumer_group = $2
      AND r.partition_id = ANY (ARRAY(SELECT c.partition_id FROM claimed c))
      AND (r.partition_id, r.seq) IN (SELECT k.partition_id, k.seq FROM kept k)/*]*/
)
SELECT k.partition_id, k.partition_name, k.retries, k.id, k.transaction_id, k.trace_id, k.payload,
       k.producer_sub, k.is_encrypted, k.created_at, l.id
FROM kept k /*[multi*/JOIN claimed c ON c.partition_id = k.partition_id/*]*/ CROSS JOIN lease l
/*[one*/WHERE EXISTS (SELECT FROM claimed)/*]*/
ORDER BY k.claim_order, k.seq

-- fragment: claim_insert
-- The claim of claimed_head and claimed_rest: a consumer row per partition of the claim c they read.
INSERT INTO partition_consumers AS pc
    (partition_id, consumer_group, cursor_seq, claim_cursor_seq, lease_id, lease_expires_at,
     delivered_seq, delivered_count, last_claimed_at, total_consumed, last_consumed_at, lease_partitions)
SELECT c.partition_id, $2, c.cursor_seq, c.claim_cursor_seq, c.lease_id, c.lease_expires_at,
       c.delivered_seq, c.delivered_count, coalesce($8::timestamptz, now()), c.total_consumed, c.last_consumed_at,
       c.lease_partitions

-- fragment: claim_upsert
-- What claim_insert does to an existing consumer row: the lease it replaces becomes the previous one
-- (a repeated completion under it is still recognised), and the rest is the claim's.
ON CONFLICT (partition_id, consumer_group) DO UPDATE SET
    prev_lease_id         = pc.lease_id,
    prev_claim_cursor_seq = pc.claim_cursor_seq,
    prev_delivered_seq    = pc.delivered_seq,
    cursor_seq       = EXCLUDED.cursor_seq,
    claim_cursor_seq = EXCLUDED.claim_cursor_seq,
    lease_id         = EXCLUDED.lease_id,
    lease_expires_at = EXCLUDED.lease_expires_at,
    delivered_seq    = EXCLUDED.delivered_seq,
    delivered_count  = EXCLUDED.delivered_count,
    last_claimed_at  = EXCLUDED.last_claimed_at,
    total_consumed   = pc.total_consumed + EXCLUDED.total_consumed,
    last_consumed_at = coalesce(EXCLUDED.last_consumed_at, pc.last_consumed_at),
    lease_partitions = EXCLUDED.lease_partitions
-- The lease is taken only if it is still free and the cursor is still the one the messages were
-- read after.
WHERE (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($8::timestamptz, now()))
  AND (pc.retry_after IS NULL OR pc.retry_after <= coalesce($8::timestamptz, now()))
  AND pc.cursor_seq = EXCLUDED.claim_cursor_seq
