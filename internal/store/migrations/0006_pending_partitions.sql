-- pending_partitions: per (queue, consumer group), the partitions that may hold work for the group, so
-- that a wildcard pop reads a short ordered list instead of every partition of the queue.
--
-- Invariant: a partition with unconsumed work for a group (messages after the group's cursor, or dead
-- letters retried for it) has a row. A row may outlive its work (it is then skipped and dropped by the
-- next ack or pop that consumes the partition to its end); pops check the real state, so a stale row
-- costs a little time, never a wrong delivery.
--   - pushes insert rows for the queue-mode group and every subscribed group (ON CONFLICT DO NOTHING:
--     an existing row keeps its place in line);
--   - a group's first subscription on a queue seeds its rows; cursor moves by the group routes refresh
--     them; retried dead letters insert theirs;
--   - rows are deleted only while the partition row is share-locked and its last_seq is covered by the
--     cursor: a push holds the partition locked from before its insert until its commit, so a delete
--     can never drop a row a concurrent push relies on.
-- ready_at orders the line: a claim moves the partition to the back (ready_at = now()), a new row joins
-- at the back, a partition waiting with work keeps its place, so no partition starves. Rows of queues
-- with delayedProcessing start when their first message becomes visible. Leases, retry delays and the
-- window buffer are checked on the consumer and partition rows, which the pop reads anyway: a
-- wildcard pop touches the partitions it claims, those leased or delayed ahead of them, and no other.
CREATE TABLE pending_partitions (
    partition_id   uuid NOT NULL REFERENCES partitions(id) ON DELETE CASCADE,
    consumer_group text NOT NULL,
    queue_id       uuid NOT NULL,
    ready_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
);

CREATE INDEX pending_partitions_line_idx ON pending_partitions (queue_id, consumer_group, ready_at, partition_id);

-- Pushes look up the groups subscribed to a queue.
CREATE INDEX consumer_group_subscriptions_queue_idx ON consumer_group_subscriptions (queue_id, consumer_group);

INSERT INTO pending_partitions (partition_id, consumer_group, queue_id, ready_at)
SELECT p.id, g.consumer_group, p.queue_id, now()
FROM partitions p
CROSS JOIN LATERAL (
    SELECT '__QUEUE_MODE__'::text AS consumer_group
    UNION
    SELECT s.consumer_group FROM consumer_group_subscriptions s WHERE s.queue_id = p.queue_id
    UNION
    SELECT pc.consumer_group FROM partition_consumers pc WHERE pc.partition_id = p.id
) g
LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
WHERE p.last_seq > coalesce(pc.cursor_seq, 0)
   OR EXISTS (SELECT 1 FROM redeliveries r WHERE r.partition_id = p.id AND r.consumer_group = g.consumer_group);
