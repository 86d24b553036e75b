-- delete_messages removes messages by (partition, seq) together with what hangs on them: their dead
-- letters (traces cascade) and their share of partitions.message_count. Retention, completed
-- retention and the single-message delete all go through it, so the three can never disagree about
-- what deleting a message means. It returns the rows it deleted.
CREATE FUNCTION delete_messages(parts uuid[], seqs bigint[])
RETURNS TABLE (partition_id uuid, transaction_id text)
LANGUAGE sql VOLATILE AS $$
    WITH del AS (
        DELETE FROM messages m USING unnest(parts, seqs) AS v(partition_id, seq)
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
