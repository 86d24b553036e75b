-- delete_messages as in 0015, with the partitions it updates locked first in id order, as pushes lock
-- them (PartitionLock). Its count update met them in hash order: a retention statement holding one
-- partition and waiting for another deadlocked with a push holding the second and waiting for the
-- first (seen in the 1 h soak, several times an hour). NO KEY UPDATE is what the update takes anyway.
CREATE OR REPLACE FUNCTION delete_messages(parts uuid[], seqs bigint[])
RETURNS TABLE (partition_id uuid, transaction_id text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    dp uuid[];
    dt text[];
BEGIN
    PERFORM 1 FROM partitions p WHERE p.id = ANY (parts) ORDER BY p.id FOR NO KEY UPDATE;
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
    SELECT array_agg(del.partition_id), array_agg(del.transaction_id) INTO dp, dt FROM del;
    DELETE FROM message_traces t USING unnest(dp, dt) AS g(partition_id, transaction_id)
    WHERE t.partition_id = g.partition_id AND t.transaction_id = g.transaction_id;
    RETURN QUERY SELECT g.partition_id, g.transaction_id FROM unnest(dp, dt) AS g(partition_id, transaction_id);
END
$$;
