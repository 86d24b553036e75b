-- messages lose their foreign key to partitions (issue 14): its check was one trigger query per pushed
-- row (about 3 µs of PostgreSQL time each, a third of what a pushed row costs; docs/performance.md).
-- What it guaranteed is kept by the two statements that delete partitions:
-- * every push locks its partitions (PartitionLock) before it inserts and holds them to its commit,
--   and inserts only into partitions its statement still finds (MessageInsert joins the bumped rows);
-- * deleting partitions waits for those locks, and then deletes their messages in a later statement,
--   whose snapshot sees every push that committed meanwhile (delete_queue below; the retention
--   cleanup deletes only partitions no push touched since it chose them).
-- So no message outlives its partition (TestQueueDeleteRacingPushesLeavesNoOrphans).
ALTER TABLE messages DROP CONSTRAINT messages_partition_id_fkey;

-- delete_queue removes a queue with its partitions and their messages; 0 when there is no such queue.
-- PL/pgSQL, so each statement takes a fresh snapshot after the locks the previous one waited for:
-- the queue row is locked first (a partition being created for it finishes first, none can start),
-- then its partitions are deleted (waiting for the pushes that hold them), then their messages, which
-- now include every row those pushes committed. The rest (consumer state, dead letters, pending-work
-- rows, subscriptions) goes by the foreign keys' cascades.
CREATE FUNCTION delete_queue(queue_name text) RETURNS bigint
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
    DELETE FROM queues q WHERE q.id = qid;
    RETURN 1;
END
$$;
