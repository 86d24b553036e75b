-- name: MessageExpireWaiting :many
-- maxWaitTimeSeconds: messages that waited longer than their queue allows move, for each group of the
-- queue (queue_groups, migration 0021) not under a live lease there, to that group's dead letters, and
-- the group's position moves past them. A partition the group never read is positioned before its
-- first message, as for seeks and lag: its expired messages move too, and the group gets a cursor after
-- them.
-- The queues that set it are read first and their partitions looked up by queue (each OFFSET 0 keeps
-- its subquery from being merged into the joins and planned in another order): a plan made with
-- statistics from before 100 000 partitions were created walked every consumer row and joined the
-- queue last, 5.4 s per pass with no queue using the option, holding back the vacuum of every table
-- meanwhile.
WITH q AS (
    SELECT id, max_wait_time_seconds FROM queues WHERE max_wait_time_seconds > 0 OFFSET 0
), g AS MATERIALIZED (
    SELECT q.id, q.max_wait_time_seconds, g.consumer_group FROM q CROSS JOIN LATERAL queue_groups(q.id) g
), exp AS (
    SELECT p.id AS partition_id, g.consumer_group, m.seq, m.id, m.transaction_id, m.created_at
    FROM g
    CROSS JOIN LATERAL (SELECT p.id FROM partitions p WHERE p.queue_id = g.id OFFSET 0) p
    LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
    JOIN messages m ON m.partition_id = p.id AND m.seq > coalesce(pc.cursor_seq, 0)
    WHERE m.created_at < coalesce($2::timestamptz, now()) - make_interval(secs => g.max_wait_time_seconds)
      AND (pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($2::timestamptz, now()))
    ORDER BY p.id, g.consumer_group, m.seq
    LIMIT $1
), dl AS (
    INSERT INTO dead_letters (id, partition_id, message_seq, message_id, transaction_id, consumer_group,
                              error_message, retry_count, original_created_at, failed_at)
    SELECT gen_random_uuid(), partition_id, seq, id, transaction_id, consumer_group, 'max wait time exceeded', 0, created_at,
           coalesce($2::timestamptz, now())
    FROM exp
    ON CONFLICT (partition_id, transaction_id, consumer_group) DO NOTHING
), mv AS (
    INSERT INTO partition_consumers AS pc (partition_id, consumer_group, cursor_seq, claim_cursor_seq)
    SELECT partition_id, consumer_group, max(seq), max(seq) FROM exp GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (partition_id, consumer_group) DO UPDATE SET cursor_seq = greatest(pc.cursor_seq, EXCLUDED.cursor_seq)
    WHERE pc.lease_expires_at IS NULL OR pc.lease_expires_at <= coalesce($2::timestamptz, now())
)
SELECT count(*), coalesce(array_agg(DISTINCT partition_id), '{}') FROM exp
