-- name: PendingRefresh :exec
-- Rebuilds group $1's pending-work records (0006_pending_partitions.sql) on queue $2 (every queue when
-- NULL) after its cursors moved other than by consuming: seek, reset, subscription change. $3 is the
-- queue-mode group, which every queue has; a named group keeps records only where it is subscribed.
-- $4 is now (NULL: the database clock).
-- Partitions are share-locked, so pushes in flight finish first and are counted.
WITH qs AS (
    SELECT q.id,
           ($1 = $3::text OR EXISTS (SELECT 1 FROM consumer_group_subscriptions s
                                     WHERE s.queue_id = q.id AND s.consumer_group = $1)) AS subscribed
    FROM queues q
    WHERE $2::text IS NULL OR q.name = $2::text
), parts AS (
    SELECT p.id, p.queue_id,
           qs.subscribed AND (p.last_seq > coalesce(pc.cursor_seq, 0)
               OR EXISTS (SELECT 1 FROM redeliveries r WHERE r.partition_id = p.id AND r.consumer_group = $1)) AS has_work
    FROM qs
    JOIN partitions p ON p.queue_id = qs.id
    LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = $1
    ORDER BY p.id
    FOR SHARE OF p
), del AS (
    DELETE FROM pending_partitions pp
    USING parts
    WHERE pp.partition_id = parts.id AND pp.consumer_group = $1 AND NOT parts.has_work
)
INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
SELECT id, $1, queue_id, coalesce($4::timestamptz, now()) FROM parts WHERE has_work
ORDER BY id
ON CONFLICT (partition_id, consumer_group) DO NOTHING

-- name: PendingWork :many
-- Of the keys ($1 queue names, $2 partition names, $3 groups, element-wise), the ordinals (from 1) of
-- those whose partition has a pending-work record for the group: it may have work (a record may
-- outlive its work), while a partition without one has none. One lookup per key through the unique
-- indexes, however large the tables.
SELECT k.i
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(queue, partition, grp, i)
CROSS JOIN LATERAL (
    SELECT 1
    FROM queues q
    JOIN partitions p ON p.queue_id = q.id AND p.name = k.partition
    JOIN pending_partitions pp ON pp.partition_id = p.id AND pp.consumer_group = k.grp
    WHERE q.name = k.queue
    LIMIT 1
) x
