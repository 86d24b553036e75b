-- name: SubscriptionRecord :one
-- A subscription, step one of three (Store.EnsureSubscription): records group $2's subscription on
-- queue $1 in mode $4 unless one exists, unseeded, in a transaction of its own ($3 is the queue-mode
-- group, which has none). The point of a new subscription is this transaction's time ($6, the broker's
-- clock in tests; NULL: the database's), of a timestamp one $5. Returns the queue's id (no row: no such
-- queue), whether the group's subscription still needs its seed (the one just recorded, or one whose
-- seed was cut short), and where a seed cut short stopped (seed_after).
WITH q AS (
    SELECT id FROM queues WHERE name = $1
), ins AS (
    INSERT INTO consumer_group_subscriptions (consumer_group, queue_id, mode, subscription_ts, seeded)
    SELECT $2, q.id, $4::text,
           CASE $4::text WHEN 'new' THEN coalesce($6::timestamptz, now()) WHEN 'timestamp' THEN $5::timestamptz END,
           false
    FROM q
    WHERE $2 <> $3::text
    ON CONFLICT (consumer_group, queue_id) DO NOTHING
    RETURNING queue_id
)
SELECT q.id, EXISTS (SELECT 1 FROM ins) OR coalesce(cut.unseeded, false), cut.seed_after
FROM q
LEFT JOIN LATERAL (
    SELECT true AS unseeded, s.seed_after FROM consumer_group_subscriptions s
    WHERE s.queue_id = q.id AND s.consumer_group = $2 AND NOT s.seeded
) cut ON true

-- name: SubscriptionSeedChunk :one
-- Step two, repeated, each chunk its own transaction: seeds group $2's positions on the next $4
-- partitions of queue $1 by name after $3 (NULL: from the first), records the last name taken as the
-- subscription's seed_after, and returns it (NULL: none left). In the default mode (all) a cursor
-- starts at 0, so only the pending-work records are seeded; a new or timestamp subscription also gets
-- a cursor on each partition at its last message created at or before the subscription point, so the
-- group starts after it. A partition no chunk saw (created after its chunk) starts at its beginning:
-- all its messages came after the point.
-- No push escapes the seed although it holds no lock across chunks: the subscription committed before
-- the first chunk, so a push statement that starts later reads it and records the group's work itself
-- (PartitionBump). A push whose PartitionBump read the subscriptions before that commit holds its
-- partitions locked until it commits, and they existed before the commit too, so some chunk reaches
-- them: its share lock waits for that push and then reads last_seq as the push left it. A push thus
-- waits for one chunk at most, not for the whole seed (docs/performance.md, Known issue 20). The cursor
-- is exact for the same reason: a message's created_at is taken under its partition's lock and grows
-- along the partition's sequence ("One clock"), so a chunk that holds the share lock has seen every
-- message created at or before the point, and none created after it precedes one that was.
-- Resuming after seed_after is sound: every chunk committed after the subscription did.
-- The chunk is chosen by name, which (queue_id, name) serves as a range, and locked in id order, the
-- order pushes lock partitions in, so the two cannot deadlock.
WITH chunk AS (
    SELECT p.id, p.name
    FROM partitions p
    WHERE p.queue_id = $1 AND ($3::text IS NULL OR p.name > $3::text)
    ORDER BY p.name
    LIMIT $4
), parts AS (
    SELECT p.id, p.queue_id, p.last_seq
    FROM partitions p
    WHERE p.id IN (SELECT c.id FROM chunk c)
    ORDER BY p.id
    FOR SHARE OF p
), sub AS (
    SELECT s.subscription_ts AS at
    FROM consumer_group_subscriptions s
    WHERE s.queue_id = $1 AND s.consumer_group = $2 AND s.mode IN ('new', 'timestamp')
), start AS (
    SELECT parts.id, parts.queue_id, parts.last_seq,
           (SELECT coalesce((SELECT m.seq FROM messages m
                             WHERE m.partition_id = parts.id AND m.created_at <= sub.at
                             ORDER BY m.seq DESC LIMIT 1), 0)
            FROM sub) AS seq
    FROM parts
), seed AS (
    INSERT INTO partition_consumers (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
    SELECT st.id, $2, st.seq, st.seq
    FROM start st
    WHERE st.seq IS NOT NULL
    ORDER BY st.id
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
), pend AS (
    INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
    SELECT st.id, $2, st.queue_id, coalesce($5::timestamptz, now())
    FROM start st
    LEFT JOIN partition_consumers pc ON pc.partition_id = st.id AND pc.consumer_group = $2
    WHERE st.last_seq > coalesce(pc.cursor_seq, st.seq, 0)
       OR EXISTS (SELECT 1 FROM redeliveries r WHERE r.partition_id = st.id AND r.consumer_group = $2)
    ORDER BY st.id
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
), progress AS (
    UPDATE consumer_group_subscriptions s SET seed_after = greatest(s.seed_after, (SELECT max(c.name) FROM chunk c))
    WHERE s.queue_id = $1 AND s.consumer_group = $2 AND NOT s.seeded
)
SELECT max(c.name) FROM chunk c

-- name: SubscriptionSeeded :exec
-- Step three: the seed is complete.
UPDATE consumer_group_subscriptions SET seeded = true, seed_after = NULL
WHERE queue_id = $1 AND consumer_group = $2 AND NOT seeded

-- name: SubscriptionLock :exec
-- Runs before SubscriptionRecordSeeked, in the seek's transaction, when the group may not be subscribed
-- yet: the queue's row locked FOR UPDATE waits for every transaction still creating a partition of the
-- queue (their foreign-key check holds the row FOR KEY SHARE) and holds off new ones until the
-- subscription commits. The seek's own statements then see every partition a push may already be
-- filling, and a partition created later is pushed to by statements that see the subscription.
-- Without it, a partition committed after the seek's snapshot and pushed to by a statement that read
-- the subscriptions before it committed got no pending-work record for the group, and the group's
-- wildcard pops never found its messages. A pop's subscription needs no such lock: it commits before
-- its seed starts (SubscriptionSeedChunk).
SELECT 1 FROM queues q
WHERE q.name = $1 AND $2 <> $3::text
  AND NOT EXISTS (SELECT 1 FROM consumer_group_subscriptions s WHERE s.queue_id = q.id AND s.consumer_group = $2)
FOR UPDATE OF q

-- name: ConsumerGroupList :many
-- One row per (group, queue) for every group of every queue (queue_groups, migration 0021): lag and
-- counts over every partition of the queue, a partition the group never read counted from its first
-- message. unconsumed = least(message_count, last_seq - position), as the stats pass counts it;
-- processing = the live lease's range. The oldest-message probe runs only where something is behind.
WITH g AS MATERIALIZED (
    SELECT q.id AS queue_id, q.name AS queue_name, g.consumer_group, g.queue_mode
    FROM queues q CROSS JOIN LATERAL queue_groups(q.id) g
), r AS (
    SELECT g.queue_id, g.queue_name, g.consumer_group, g.queue_mode, p.id, p.message_count, p.last_seq,
           pc.partition_id IS NOT NULL AS has_cursor, coalesce(pc.cursor_seq, 0) AS pos,
           coalesce(pc.total_consumed, 0) AS consumed,
           CASE WHEN pc.lease_expires_at > coalesce($1::timestamptz, now())
                THEN greatest(0, least(pc.delivered_seq, p.last_seq) - pc.cursor_seq) ELSE 0 END AS processing
    FROM g
    JOIN partitions p ON p.queue_id = g.queue_id
    LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
)
SELECT r.consumer_group, r.queue_name, r.queue_mode, count(*) FILTER (WHERE r.has_cursor) AS members,
       count(r.id) AS partitions,
       count(*) FILTER (WHERE r.last_seq > r.pos) AS behind,
       coalesce(sum(greatest(0, least(r.message_count, r.last_seq - r.pos))), 0)::bigint AS lag,
       coalesce(sum(r.processing), 0)::bigint AS processing,
       coalesce(sum(r.message_count), 0)::bigint AS total,
       coalesce(sum(d.dlq), 0)::bigint, coalesce(sum(d.dlq_consumed), 0)::bigint,
       coalesce(max(extract(epoch FROM coalesce($1::timestamptz, now()) - om.created_at)), 0)::float8 AS max_lag_seconds,
       coalesce(sum(r.consumed), 0)::bigint AS consumed,
       s.mode, s.subscription_ts, s.created_at
FROM r
LEFT JOIN LATERAL (
    SELECT m.created_at FROM messages m
    WHERE r.last_seq > r.pos AND m.partition_id = r.id AND m.seq > r.pos
    ORDER BY m.seq LIMIT 1
) om ON true
LEFT JOIN LATERAL (
    SELECT count(DISTINCT dl.message_seq) AS dlq,
           count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= r.pos) AS dlq_consumed
    FROM dead_letters dl WHERE dl.partition_id = r.id AND dl.consumer_group = r.consumer_group
) d ON true
LEFT JOIN consumer_group_subscriptions s ON s.consumer_group = r.consumer_group AND s.queue_id = r.queue_id
GROUP BY r.consumer_group, r.queue_name, r.queue_mode, s.mode, s.subscription_ts, s.created_at
ORDER BY r.consumer_group, r.queue_name

-- name: ConsumerGroupPartitions :many
-- Every partition of every queue group $1 belongs to (queue_groups, migration 0021): position, lag,
-- lease. A partition the group never read has no cursor and counts from its first message.
WITH g AS MATERIALIZED (
    SELECT q.id, q.name FROM queues q
    WHERE EXISTS (SELECT 1 FROM queue_groups(q.id) g WHERE g.consumer_group = $1)
)
SELECT g.name, p.name, p.id, CASE WHEN pc.lease_expires_at > coalesce($2::timestamptz, now()) THEN pc.lease_id END,
       pc.last_consumed_at, coalesce(pc.total_consumed, 0), greatest(p.last_seq - coalesce(pc.cursor_seq, 0), 0),
       coalesce(extract(epoch FROM coalesce($2::timestamptz, now()) - om.created_at), 0)::float8,
       coalesce(pc.lease_expires_at > coalesce($2::timestamptz, now()), false),
       pc.partition_id IS NOT NULL
FROM g
JOIN partitions p ON p.queue_id = g.id
LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = $1
LEFT JOIN LATERAL (
    SELECT m.created_at FROM messages m
    WHERE p.last_seq > coalesce(pc.cursor_seq, 0) AND m.partition_id = p.id AND m.seq > coalesce(pc.cursor_seq, 0)
    ORDER BY m.seq LIMIT 1
) om ON true
ORDER BY g.name, p.name

-- name: PartitionListLagging :many
-- Every (group, partition) of every queue (queue_groups, migration 0021) whose oldest message after the
-- group's position is older than $1 seconds, worst first; a partition the group never read counts
-- from its first message.
WITH g AS MATERIALIZED (
    SELECT q.id AS queue_id, q.name AS queue_name, g.consumer_group
    FROM queues q CROSS JOIN LATERAL queue_groups(q.id) g
)
SELECT g.consumer_group, g.queue_name, p.name, p.id, CASE WHEN pc.lease_expires_at > coalesce($2::timestamptz, now()) THEN pc.lease_id END,
       greatest(p.last_seq - coalesce(pc.cursor_seq, 0), 0), extract(epoch FROM coalesce($2::timestamptz, now()) - om.created_at)::float8,
       om.created_at, pc.last_consumed_at, pc.partition_id IS NOT NULL
FROM g
JOIN partitions p ON p.queue_id = g.queue_id
LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
JOIN LATERAL (
    SELECT m.created_at FROM messages m
    WHERE p.last_seq > coalesce(pc.cursor_seq, 0) AND m.partition_id = p.id AND m.seq > coalesce(pc.cursor_seq, 0)
    ORDER BY m.seq LIMIT 1
) om ON true
WHERE om.created_at < coalesce($2::timestamptz, now()) - make_interval(secs => $1)
ORDER BY om.created_at, g.consumer_group, p.name

-- name: ConsumerGroupDeleteCursors :one
-- $2: queue name or NULL for every queue. $3: also forget the subscription. Without it, the cursors
-- are re-seeded at the recorded subscription point right away (the group restarts there).
WITH del AS (
    DELETE FROM partition_consumers pc
    USING partitions p, queues q
    WHERE pc.partition_id = p.id AND p.queue_id = q.id AND pc.consumer_group = $1
      AND ($2::text IS NULL OR q.name = $2::text)
    RETURNING pc.partition_id
), meta AS (
    DELETE FROM consumer_group_subscriptions s
    USING queues q
    WHERE $3 AND s.queue_id = q.id AND s.consumer_group = $1 AND ($2::text IS NULL OR q.name = $2::text)
    RETURNING s.queue_id
)
SELECT (SELECT count(*) FROM del), (SELECT count(*) FROM meta)

-- name: ConsumerGroupReseed :exec
-- Puts every partition cursor of group $1 (on queue $2, or all queues when NULL) that has not consumed
-- anything yet at its subscription point; used after a cursor reset and a subscription change.
INSERT INTO partition_consumers AS pc (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
SELECT p.id, s.consumer_group, x.seq, x.seq
FROM consumer_group_subscriptions s
JOIN queues q ON q.id = s.queue_id
JOIN partitions p ON p.queue_id = q.id
CROSS JOIN LATERAL (
    SELECT coalesce((SELECT m.seq FROM messages m
                     WHERE m.partition_id = p.id AND m.created_at <= s.subscription_ts
                     ORDER BY m.seq DESC LIMIT 1), 0) AS seq
) x
WHERE s.consumer_group = $1 AND s.mode <> 'all' AND ($2::text IS NULL OR q.name = $2::text)
ORDER BY p.id
ON CONFLICT (partition_id, consumer_group) DO UPDATE
    SET cursor_seq = EXCLUDED.cursor_seq, claim_cursor_seq = EXCLUDED.claim_cursor_seq
    WHERE pc.total_consumed = 0 AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($3::timestamptz, now()))

-- name: SubscriptionRecordSeeked :one
-- A seek of named group $2 on queue $1 ($3 the queue-mode group, which has none) records the group's
-- subscription unless one exists, so that the group is one of the queue's groups (queue_groups,
-- migration 0021) and pushes record its pending work. Recorded as the default mode, seeded: the seek's
-- pending-work refresh seeds it in the same transaction. Runs after SubscriptionLock. Returns whether
-- it recorded one.
WITH ins AS (
    INSERT INTO consumer_group_subscriptions (consumer_group, queue_id, mode, seeded)
    SELECT $2, q.id, 'all', true FROM queues q
    WHERE q.name = $1 AND $2 <> $3::text
    ON CONFLICT (consumer_group, queue_id) DO NOTHING
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM ins)

-- name: SubscriptionUpdate :one
WITH upd AS (
    UPDATE consumer_group_subscriptions
    SET subscription_ts = $2, mode = CASE WHEN mode = 'all' THEN 'timestamp' ELSE mode END
    WHERE consumer_group = $1
    RETURNING 1
)
SELECT count(*) FROM upd

-- name: ConsumerGroupSeekQueue :one
-- Places group $1's position on every partition of queue $2, read by the group or not, at the end ($3)
-- or after the last message at or before $4 (0: before the first), and ends its leases. A partition
-- the group never read whose target is 0 is already there and gets no row. Returns the partitions of
-- the queue and whether it exists.
WITH target AS (
    SELECT p.id,
           CASE WHEN $3 THEN p.last_seq
                ELSE coalesce((SELECT m.seq FROM messages m
                               WHERE m.partition_id = p.id AND m.created_at <= $4::timestamptz
                               ORDER BY m.seq DESC LIMIT 1), 0)
           END AS seq
    FROM queues q
    JOIN partitions p ON p.queue_id = q.id
    WHERE q.name = $2
), upd AS (
    INSERT INTO partition_consumers AS pc (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
    SELECT t.id, $1, t.seq, t.seq FROM target t
    WHERE t.seq > 0 OR EXISTS (SELECT 1 FROM partition_consumers x WHERE x.partition_id = t.id AND x.consumer_group = $1)
    ORDER BY t.id
    ON CONFLICT (partition_id, consumer_group) DO UPDATE
        SET cursor_seq = EXCLUDED.cursor_seq, claim_cursor_seq = EXCLUDED.cursor_seq,
            lease_expires_at = NULL, batch_retry_count = 0, retry_after = NULL
    RETURNING 1
)
SELECT (SELECT count(*) FROM target), EXISTS (SELECT 1 FROM queues WHERE name = $2), (SELECT count(*) FROM upd)

-- name: ConsumerGroupSeekPartition :one
-- Moves group $1's cursor on partition $3 of queue $2 to the partition's end (creating the cursor).
WITH p AS (
    SELECT p.id, p.last_seq FROM partitions p JOIN queues q ON q.id = p.queue_id
    WHERE q.name = $2 AND p.name = $3
), up AS (
    INSERT INTO partition_consumers AS pc (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
    SELECT p.id, $1, p.last_seq, p.last_seq FROM p
    ON CONFLICT (partition_id, consumer_group) DO UPDATE
        SET cursor_seq = EXCLUDED.cursor_seq, claim_cursor_seq = EXCLUDED.cursor_seq,
            lease_expires_at = NULL, batch_retry_count = 0, retry_after = NULL
    RETURNING cursor_seq
)
SELECT (SELECT cursor_seq FROM up), EXISTS (SELECT 1 FROM p)
