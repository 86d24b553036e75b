-- name: MessageExpireWaiting :many
-- maxWaitTimeSeconds: messages that waited longer than their queue allows, for each group cursor of
-- the queue (not under a live lease), move to that group's dead letters; the cursor moves past them.
-- The queues that set it are read first and their partitions looked up by queue (each OFFSET 0 keeps
-- its subquery from being merged into the joins and planned in another order): a plan made with
-- statistics from before 100 000 partitions were created walked every consumer row and joined the
-- queue last, 5.4 s per pass with no queue using the option, holding back the vacuum of every table
-- meanwhile.
WITH exp AS (
    SELECT pc.partition_id, pc.consumer_group, m.seq, m.id, m.transaction_id, m.created_at
    FROM (SELECT id, max_wait_time_seconds FROM queues WHERE max_wait_time_seconds > 0 OFFSET 0) q
    CROSS JOIN LATERAL (SELECT p.id FROM partitions p WHERE p.queue_id = q.id OFFSET 0) p
    JOIN partition_consumers pc ON pc.partition_id = p.id
    JOIN messages m ON m.partition_id = p.id AND m.seq > pc.cursor_seq
    WHERE m.created_at < coalesce($2::timestamptz, now()) - make_interval(secs => q.max_wait_time_seconds)
      AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($2::timestamptz, now()))
    ORDER BY pc.partition_id, pc.consumer_group, m.seq
    LIMIT $1
), dl AS (
    INSERT INTO dead_letters (id, partition_id, message_seq, message_id, transaction_id, consumer_group,
                              error_message, retry_count, original_created_at, failed_at)
    SELECT gen_random_uuid(), partition_id, seq, id, transaction_id, consumer_group, 'max wait time exceeded', 0, created_at,
           coalesce($2::timestamptz, now())
    FROM exp
    ON CONFLICT (partition_id, transaction_id, consumer_group) DO NOTHING
), mv AS (
    UPDATE partition_consumers pc SET cursor_seq = greatest(pc.cursor_seq, e.seq)
    FROM (SELECT partition_id, consumer_group, max(seq) AS seq FROM exp GROUP BY 1, 2) e
    WHERE pc.partition_id = e.partition_id AND pc.consumer_group = e.consumer_group
      AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($2::timestamptz, now()))
)
SELECT count(*) FROM exp
