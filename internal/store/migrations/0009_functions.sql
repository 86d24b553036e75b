-- Functions shared by several named queries. The bodies refer to their arguments as $1, $2...: in a
-- SQL function a column of the same name would win over an argument name.

-- delete_messages removes messages by (partition, seq) together with what hangs on them: their dead
-- letters (traces cascade) and their share of partitions.message_count. Retention, completed
-- retention and the single-message delete all go through it, so the three can never disagree about
-- what deleting a message means. It returns the rows it deleted.
CREATE FUNCTION delete_messages(parts uuid[], seqs bigint[])
RETURNS TABLE (partition_id uuid, transaction_id text)
LANGUAGE sql VOLATILE AS $$
    WITH del AS (
        DELETE FROM messages m USING unnest($1, $2) AS v(partition_id, seq)
        WHERE m.partition_id = v.partition_id AND m.seq = v.seq
        RETURNING m.partition_id, m.transaction_id
    ), dl AS (
        DELETE FROM dead_letters d USING del
        WHERE d.partition_id = del.partition_id AND d.transaction_id = del.transaction_id
    ), counted AS (
        UPDATE partitions p SET message_count = p.message_count - x.n
        FROM (SELECT del.partition_id, count(*) AS n FROM del GROUP BY del.partition_id) x
        WHERE p.id = x.partition_id
    )
    SELECT del.partition_id, del.transaction_id FROM del
$$;

-- partition_counts is the one definition of a partition's counts, for the status pages
-- (PartitionCounts) and the stats refresh (StatsRefresh) alike. "Consumed" is relative to the slowest
-- consumer group of the partition (min cursor_seq; 0 without any group); processing = above it and
-- inside a live lease. Only the unconsumed tail is counted (an index range on (partition_id, seq));
-- the total is the stored partitions.message_count, passed in as stored. STABLE and a single SELECT,
-- so the planner inlines it.
CREATE FUNCTION partition_counts(part uuid, stored bigint)
RETURNS TABLE (total bigint, consumed bigint, processing bigint, oldest_pending timestamptz,
               dlq bigint, dlq_consumed bigint)
LANGUAGE sql STABLE AS $$
    SELECT c.total, c.consumed, c.processing, c.oldest_pending, d.dlq, d.dlq_consumed
    FROM (SELECT coalesce(min(pc.cursor_seq), 0) AS min_cursor
          FROM partition_consumers pc WHERE pc.partition_id = $1) f
    CROSS JOIN LATERAL (
        SELECT $2 AS total,
               $2 - count(*) AS consumed,
               count(*) FILTER (WHERE EXISTS (
                   SELECT 1 FROM partition_consumers pc
                   WHERE pc.partition_id = $1 AND pc.lease_expires_at > now()
                     AND m.seq > pc.cursor_seq AND m.seq <= pc.delivered_seq)) AS processing,
               min(m.created_at) AS oldest_pending
        FROM messages m WHERE m.partition_id = $1 AND m.seq > f.min_cursor) c
    CROSS JOIN LATERAL (
        SELECT count(DISTINCT dl.message_seq) AS dlq,
               count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= f.min_cursor) AS dlq_consumed
        FROM dead_letters dl WHERE dl.partition_id = $1) d
$$;

-- dead_letters_matching is the dead-letter listing's filter, shared by the page (DeadLetterList) and
-- its total (DeadLetterCount) so the two always count the same rows. A NULL argument does not filter.
-- STABLE and a single SELECT, so the planner inlines it.
CREATE FUNCTION dead_letters_matching(queue text, grp text, part text, since timestamptz, until timestamptz)
RETURNS TABLE (id uuid, queue_name text, partition_name text)
LANGUAGE sql STABLE AS $$
    SELECT d.id, q.name, p.name
    FROM dead_letters d
    JOIN partitions p ON p.id = d.partition_id
    JOIN queues q ON q.id = p.queue_id
    WHERE ($1 IS NULL OR q.name = $1)
      AND ($2 IS NULL OR d.consumer_group = $2)
      AND ($3 IS NULL OR p.name = $3)
      AND ($4 IS NULL OR d.failed_at >= $4)
      AND ($5 IS NULL OR d.failed_at <= $5)
$$;

-- retire_messages is how the retention rules delete: it deletes the given messages (one entry of
-- parts, seqs and queue_names a message), records the count per queue in retention_history under
-- kind, and returns those counts.
CREATE FUNCTION retire_messages(kind text, at timestamptz, parts uuid[], seqs bigint[], queue_names text[])
RETURNS TABLE (queue_name text, deleted bigint)
LANGUAGE sql VOLATILE AS $$
    WITH names AS (
        SELECT DISTINCT n.partition_id, n.queue_name FROM unnest($3, $5) AS n(partition_id, queue_name)
    ), del AS (
        SELECT names.queue_name FROM delete_messages($3, $4) d JOIN names ON names.partition_id = d.partition_id
    ), hist AS (
        INSERT INTO retention_history (queue_name, kind, deleted, executed_at)
        SELECT del.queue_name, $1, count(*), $2 FROM del GROUP BY del.queue_name
    )
    SELECT del.queue_name, count(*) FROM del GROUP BY del.queue_name
$$;
