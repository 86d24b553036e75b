-- name: RetentionDeleteExpired :many
-- retentionSeconds: messages older than the queue's retention, whatever their state, oldest first, at
-- most $2 per partition. Their dead letters go with them; their traces are deleted by delete_messages (0015).
-- The queues with the option are read first and their partitions looked up by queue, for the reason
-- given at MessageExpireWaiting (eviction.sql). Only a prefix of the partition goes (stats count from
-- the front, docs/decisions.md "Stats from counters"): up to the first message still kept, looked for
-- among the first $2 + 1 only, so that a statement reads O($2) rows however long the expired backlog
-- (walking to the first kept message read the whole backlog per statement: quadratic in it).
WITH victims AS (
    SELECT m.partition_id, m.seq, m.transaction_id, q.name AS queue_name
    FROM (SELECT id, name, retention_seconds FROM queues WHERE retention_enabled AND retention_seconds > 0 OFFSET 0) q
    CROSS JOIN LATERAL (SELECT p.id, p.last_seq FROM partitions p WHERE p.queue_id = q.id OFFSET 0) p
    CROSS JOIN LATERAL (
        SELECT m.seq, m.partition_id, m.transaction_id FROM messages m
        WHERE m.partition_id = p.id AND m.created_at < $1::timestamptz - make_interval(secs => q.retention_seconds)
          AND m.seq < coalesce((SELECT y.seq FROM (SELECT y.seq, y.created_at FROM messages y
                                                   WHERE y.partition_id = p.id ORDER BY y.seq LIMIT $2 + 1) y
                                 WHERE y.created_at >= $1::timestamptz - make_interval(secs => q.retention_seconds)
                                 ORDER BY y.seq LIMIT 1), p.last_seq + 1)
        ORDER BY m.seq LIMIT $2) m
)
SELECT r.queue_name, r.deleted
FROM (SELECT array_agg(partition_id ORDER BY partition_id, seq) AS parts, array_agg(seq ORDER BY partition_id, seq) AS seqs,
             array_agg(queue_name ORDER BY partition_id, seq) AS names FROM victims) v
CROSS JOIN LATERAL retire_messages('retention', $1, v.parts, v.seqs, v.names) r

-- name: RetentionDeleteCompleted :many
-- completedRetentionSeconds: messages older than that which every consumer group of the queue has
-- consumed. The groups are queue_groups' (migration 0021), as for the stats and the eviction: a
-- subscribed group without a cursor on the partition (one that has not read it, or nothing yet) has
-- consumed none of it, so nothing above any group's position is ever deleted. The queues with the
-- option are read first, as in RetentionDeleteExpired, and their groups listed once per queue: listed
-- per partition, a statement read every consumer row of the queue for each of its partitions (9 s for
-- one queue of 2 000 partitions and 2 groups). A partition's consumer rows are read by partition alone
-- and matched to the groups in the aggregate (a test of their group in the scan could be served by the
-- group index, which holds every partition's rows). The fenced subquery computes each frontier once:
-- unfenced, the filter on it ran the consumer rows' subquery a second time per partition.
WITH q AS MATERIALIZED (
    SELECT q.id, q.name, q.completed_retention_seconds AS secs,
           ARRAY(SELECT g.consumer_group FROM queue_groups(q.id) g) AS groups
    FROM queues q WHERE q.retention_enabled AND q.completed_retention_seconds > 0
), frontier AS MATERIALIZED (
    SELECT f.* FROM (
        SELECT p.id AS partition_id, q.name AS queue_name, q.secs,
               (SELECT CASE WHEN count(*) FILTER (WHERE pc.consumer_group = ANY (q.groups)) < cardinality(q.groups) THEN 0
                            ELSE coalesce(min(pc.cursor_seq) FILTER (WHERE pc.consumer_group = ANY (q.groups)), 0) END
                FROM partition_consumers pc WHERE pc.partition_id = p.id) AS upto
        FROM q CROSS JOIN LATERAL (SELECT p.id FROM partitions p WHERE p.queue_id = q.id OFFSET 0) p
        OFFSET 0
    ) f
    WHERE f.upto > 0
), victims AS (
    SELECT f.partition_id, m.seq, f.queue_name
    FROM frontier f
    CROSS JOIN LATERAL (
        SELECT m.seq FROM messages m
        WHERE m.partition_id = f.partition_id AND m.seq <= f.upto
          AND m.created_at < $1::timestamptz - make_interval(secs => f.secs)
        ORDER BY m.seq LIMIT $2) m
)
SELECT r.queue_name, r.deleted
FROM (SELECT array_agg(partition_id ORDER BY partition_id, seq) AS parts, array_agg(seq ORDER BY partition_id, seq) AS seqs,
             array_agg(queue_name ORDER BY partition_id, seq) AS names FROM victims) v
CROSS JOIN LATERAL retire_messages('completed_retention', $1, v.parts, v.seqs, v.names) r

-- name: RetentionCleanupPartitions :many
-- Partitions (other than Default) with no messages and no activity for $2 days.
WITH victims AS (
    SELECT p.id, p.last_push_at, q.name AS queue_name
    FROM partitions p JOIN queues q ON q.id = p.queue_id
    WHERE p.name <> 'Default'
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.partition_id = p.id)
      AND greatest(p.created_at, p.last_push_at,
                   (SELECT max(greatest(pc.created_at, pc.last_claimed_at, pc.last_consumed_at))
                    FROM partition_consumers pc WHERE pc.partition_id = p.id))
          < $1::timestamptz - make_interval(days => $2)
    ORDER BY p.id
    LIMIT 1000
    -- A partition a push holds is in use: skipped rather than waited for (waiting, in whatever order
    -- the scan meets them, could deadlock with pushes, which lock in id order).
    FOR UPDATE OF p SKIP LOCKED
), del AS (
    -- Messages have no foreign key to cascade them away (0010) and must not outlive their partition:
    -- a push that stored into a victim after this statement's snapshot moved its last_push_at, so the
    -- lock above (which re-checks the row it locks) and this condition both leave it.
    DELETE FROM partitions p USING victims v
    WHERE p.id = v.id AND p.last_push_at IS NOT DISTINCT FROM v.last_push_at
    RETURNING v.queue_name
), hist AS (
    INSERT INTO retention_history (queue_name, kind, deleted, executed_at)
    SELECT queue_name, 'partition_cleanup', count(*), $1 FROM del GROUP BY queue_name
)
SELECT queue_name, count(*) FROM del GROUP BY queue_name

-- name: RetentionTrimHistory :one
-- Metrics and history older than $2 days.
WITH a AS (
    DELETE FROM queue_ops_history WHERE bucket < $1::timestamptz - make_interval(days => $2) RETURNING 1
), b AS (
    DELETE FROM retention_history WHERE executed_at < $1::timestamptz - make_interval(days => $2) RETURNING 1
)
SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)
