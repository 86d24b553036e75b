-- name: TraceInsert :one
-- Resolves the message by (partition, transactionId); no row when it does not exist. The message is
-- locked as a foreign key's check would: its delete waits for this trace's transaction, and then
-- deletes the trace too (0015_traces_without_message_fk.sql).
INSERT INTO message_traces (id, partition_id, transaction_id, message_id, event_type, data, consumer_group, worker_id)
SELECT $1, m.partition_id, m.transaction_id, m.id, $4, $5, $6, $7
FROM messages m WHERE m.partition_id = $2 AND m.transaction_id = $3
FOR KEY SHARE OF m
RETURNING id

-- name: TraceNamesInsert :exec
INSERT INTO message_trace_names (trace_id, trace_name)
SELECT $1, n FROM (SELECT DISTINCT unnest($2::text[]) AS n) s WHERE n <> ''
ON CONFLICT DO NOTHING

-- name: TraceListByMessage :many
SELECT t.id, t.event_type, t.data, t.consumer_group, t.worker_id, t.created_at,
       coalesce(array_agg(n.trace_name ORDER BY n.trace_name) FILTER (WHERE n.trace_name IS NOT NULL), '{}')
FROM message_traces t
LEFT JOIN message_trace_names n ON n.trace_id = t.id
WHERE t.partition_id = $1 AND t.transaction_id = $2
GROUP BY t.id
ORDER BY t.created_at, t.id

-- name: TraceListByName :many
-- The message is a LATERAL lookup keyed by the trace's row (LIMIT 1 is exact and keeps it a subquery):
-- as a plain join, the planner carried partitions.id into messages' index condition and left the
-- transaction id as a join filter, reading the trace's whole partition through messages_pkey.
SELECT t.id, t.transaction_id, t.partition_id, t.event_type, t.data, t.consumer_group, t.worker_id, t.created_at,
       q.name, p.name, m.payload,
       (SELECT array_agg(x.trace_name ORDER BY x.trace_name) FROM message_trace_names x WHERE x.trace_id = t.id)
FROM message_trace_names n
JOIN message_traces t ON t.id = n.trace_id
CROSS JOIN LATERAL (
    SELECT m.payload FROM messages m
    WHERE m.partition_id = t.partition_id AND m.transaction_id = t.transaction_id
    LIMIT 1) m
JOIN partitions p ON p.id = t.partition_id
JOIN queues q ON q.id = p.queue_id
WHERE n.trace_name = $1
ORDER BY t.created_at DESC, t.id
LIMIT $2 OFFSET $3

-- name: TraceCountByName :one
SELECT count(*) FROM message_trace_names WHERE trace_name = $1

-- name: TraceNameList :many
SELECT n.trace_name, count(*), count(DISTINCT (t.partition_id, t.transaction_id)), max(t.created_at)
FROM message_trace_names n JOIN message_traces t ON t.id = n.trace_id
GROUP BY n.trace_name
ORDER BY max(t.created_at) DESC, n.trace_name
LIMIT $1 OFFSET $2

-- name: TraceNameCount :one
SELECT count(DISTINCT trace_name) FROM message_trace_names
