-- message_traces loses its foreign key to messages (issue 14): its ON DELETE CASCADE was one trigger
-- query per deleted message, traces or not. Deleting a queue of 500 000 messages spent 1.0 s of its
-- 1.35 s in that trigger (two index buffers per message, in message_traces_message_idx, almost always
-- empty), and the bench's next scenario paid for it. Traces are now deleted by the two functions that
-- delete messages, in one set-based statement each, through message_traces_message_idx.
-- What the key guaranteed is kept: TraceInsert locks the message it attaches to (FOR KEY SHARE, as the
-- key's check did), so a delete of that message waits for the trace's transaction; the traces are
-- deleted in a later statement than the messages, whose snapshot sees every trace committed while the
-- messages' delete waited. A trace of a message already deleted finds no message and is not stored.
ALTER TABLE message_traces DROP CONSTRAINT message_traces_partition_id_transaction_id_fkey;

-- delete_queue as in 0010, and then the traces of the deleted partitions: one range of
-- message_traces_message_idx per partition.
CREATE OR REPLACE FUNCTION delete_queue(queue_name text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    qid   uuid;
    parts uuid[];
BEGIN
    SELECT q.id INTO qid FROM queues q WHERE q.name = queue_name FOR UPDATE;
    IF qid IS NULL THEN
        RETURN 0;
    END IF;
    -- In id order, as pushes lock them (PartitionLock): a push holding one and waiting for another
    -- can then never deadlock with this delete.
    PERFORM 1 FROM partitions p WHERE p.queue_id = qid ORDER BY p.id FOR UPDATE;
    WITH d AS (DELETE FROM partitions p WHERE p.queue_id = qid RETURNING p.id)
    SELECT array_agg(d.id) INTO parts FROM d;
    DELETE FROM messages m WHERE m.partition_id = ANY (parts);
    DELETE FROM message_traces t WHERE t.partition_id = ANY (parts);
    DELETE FROM queues q WHERE q.id = qid;
    RETURN 1;
END
$$;

-- delete_messages as in 0009, and then the deleted messages' traces. PL/pgSQL for the fresh snapshot
-- of its second statement (see above).
CREATE OR REPLACE FUNCTION delete_messages(parts uuid[], seqs bigint[])
RETURNS TABLE (partition_id uuid, transaction_id text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    dp uuid[];
    dt text[];
BEGIN
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
