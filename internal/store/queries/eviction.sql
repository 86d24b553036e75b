-- name: MessageExpireWaiting :many
-- maxWaitTimeSeconds: messages that waited longer than their queue allows, for each group cursor of
-- the queue (not under a live lease), move to that group's dead letters; the cursor moves past them.
WITH exp AS (
    SELECT pc.partition_id, pc.consumer_group, m.seq, m.id, m.transaction_id, m.created_at
    FROM queues q
    JOIN partitions p ON p.queue_id = q.id
    JOIN partition_consumers pc ON pc.partition_id = p.id
    JOIN messages m ON m.partition_id = p.id AND m.seq > pc.cursor_seq
    WHERE q.max_wait_time_seconds > 0
      AND m.created_at < coalesce($2::timestamptz, now()) - make_interval(secs => q.max_wait_time_seconds)
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
