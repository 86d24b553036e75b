-- name: MessageList :many
-- $1 queue, $2 partition, $5 namespace, $6 task (NULL = any); $3 the consumer group the status is
-- relative to; $4 status filter (NULL = any); $7 limit, $8 offset; $9 now (NULL: the database clock).
-- Newest first, no payloads.
SELECT m.id, m.transaction_id, m.partition_id, q.name, p.name, q.namespace, q.task, m.trace_id, m.producer_sub,
       q.priority, m.created_at, st.status,
       CASE WHEN st.status = 'processing' THEN pc.lease_expires_at END
FROM messages m
JOIN partitions p ON p.id = m.partition_id
JOIN queues q ON q.id = p.queue_id
LEFT JOIN partition_consumers pc ON pc.partition_id = m.partition_id AND pc.consumer_group = $3
CROSS JOIN LATERAL (SELECT CASE
    WHEN EXISTS (SELECT 1 FROM dead_letters dl WHERE dl.partition_id = m.partition_id AND dl.message_seq = m.seq
                   AND dl.consumer_group = $3) THEN 'dead_letter'
    WHEN m.seq <= coalesce(pc.cursor_seq, 0) THEN 'completed'
    WHEN pc.lease_expires_at > coalesce($9::timestamptz, now()) AND m.seq <= pc.delivered_seq THEN 'processing'
    ELSE 'pending' END AS status) st
WHERE ($1::text IS NULL OR q.name = $1) AND ($2::text IS NULL OR p.name = $2)
  AND ($5::text IS NULL OR q.namespace = $5) AND ($6::text IS NULL OR q.task = $6)
  AND ($4::text IS NULL OR st.status = $4)
  AND ($4::text IS NULL OR $4 NOT IN ('pending', 'processing') OR m.seq > coalesce(pc.cursor_seq, 0))
ORDER BY m.created_at DESC, m.seq DESC
LIMIT $7 OFFSET $8

-- name: MessageGet :one
SELECT m.id, m.transaction_id, m.partition_id, q.name, p.name, q.namespace, q.task, m.payload, m.is_encrypted,
       m.trace_id, m.producer_sub, m.created_at, q.lease_time, q.retry_limit, q.retry_delay, q.ttl, q.priority, m.seq
FROM messages m
JOIN partitions p ON p.id = m.partition_id
JOIN queues q ON q.id = p.queue_id
WHERE m.partition_id = $1 AND m.transaction_id = $2

-- name: MessageConsumerList :many
-- Every group of the message's queue (queue_groups, migration 0021), with its view of message ($1
-- partition, $2 seq): a group without a cursor on the partition has consumed none of it.
SELECT g.consumer_group, coalesce($2 <= pc.cursor_seq, false),
       CASE WHEN pc.lease_expires_at > coalesce($3::timestamptz, now()) AND $2 > pc.cursor_seq AND $2 <= pc.delivered_seq
            THEN pc.lease_expires_at END,
       coalesce(pc.batch_retry_count, 0), dl.error_message, dl.retry_count
FROM queue_groups((SELECT queue_id FROM partitions WHERE id = $1)) g
LEFT JOIN partition_consumers pc ON pc.partition_id = $1 AND pc.consumer_group = g.consumer_group
LEFT JOIN dead_letters dl ON dl.partition_id = $1 AND dl.message_seq = $2 AND dl.consumer_group = g.consumer_group
ORDER BY 1

-- name: MessageDelete :one
-- Deletes one message with its dead letters and traces (delete_messages); NULL row when it did not exist.
SELECT count(*)
FROM delete_messages(ARRAY[$1::uuid], ARRAY(SELECT seq FROM messages WHERE partition_id = $1 AND transaction_id = $2))
