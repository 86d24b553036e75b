-- The one definition of which consumer groups a queue has, read by every view that reports a group's
-- position, lag or counts (queries/groups.sql, queues.sql, stats.sql) and by the eviction job
-- (eviction.sql), so that none of them can disagree with another:
--   - every named group subscribed to the queue (a pop records the subscription, so does a seek);
--   - queue mode, when it holds a cursor on one of the queue's partitions or when no named group is
--     subscribed (a queue nobody consumes is queue mode's backlog).
-- A group's position on a partition is its cursor; a partition it never read (no cursor row) is
-- positioned before its first message (0): new and timestamp subscriptions place cursors on every
-- partition that exists when they are recorded, and partitions created later start at their beginning.
-- STABLE and a single SELECT; callers materialise it once per queue.
CREATE FUNCTION queue_groups(qid uuid)
RETURNS TABLE (consumer_group text, queue_mode boolean)
LANGUAGE sql STABLE AS $$
    SELECT s.consumer_group, false FROM consumer_group_subscriptions s
    WHERE s.queue_id = $1 AND s.consumer_group <> '__QUEUE_MODE__'
    UNION ALL
    SELECT '__QUEUE_MODE__', true
    WHERE NOT EXISTS (SELECT 1 FROM consumer_group_subscriptions s
                      WHERE s.queue_id = $1 AND s.consumer_group <> '__QUEUE_MODE__')
       OR EXISTS (SELECT 1 FROM partitions p
                  JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = '__QUEUE_MODE__'
                  WHERE p.queue_id = $1)
$$;

-- partition_counts_at is partition_counts (0009) relative to a given slowest position: low is the
-- lowest position of the queue's groups on the partition (queue_groups; 0 where one never read it),
-- where partition_counts took the lowest existing cursor and so left out the groups without one.
CREATE FUNCTION partition_counts_at(part uuid, stored bigint, low bigint)
RETURNS TABLE (total bigint, consumed bigint, processing bigint, oldest_pending timestamptz,
               dlq bigint, dlq_consumed bigint)
LANGUAGE sql STABLE AS $$
    SELECT c.total, c.consumed, c.processing, c.oldest_pending, d.dlq, d.dlq_consumed
    FROM (
        SELECT $2 AS total,
               $2 - count(*) AS consumed,
               count(*) FILTER (WHERE EXISTS (
                   SELECT 1 FROM partition_consumers pc
                   WHERE pc.partition_id = $1 AND pc.lease_expires_at > now()
                     AND m.seq > pc.cursor_seq AND m.seq <= pc.delivered_seq)) AS processing,
               min(m.created_at) AS oldest_pending
        FROM messages m WHERE m.partition_id = $1 AND m.seq > $3) c
    CROSS JOIN LATERAL (
        SELECT count(DISTINCT dl.message_seq) AS dlq,
               count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= $3) AS dlq_consumed
        FROM dead_letters dl WHERE dl.partition_id = $1) d
$$;
