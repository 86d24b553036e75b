-- name: StatsPartitionSlice :many
-- One slice of a stats pass: the counts of up to $2 partitions after id $1 (in id order), summed per
-- queue; every row also carries the slice's last partition id and its partition count, where the next
-- slice starts. A partition's counts follow partition_counts_at (migration 0021) but are derived from
-- what the hot path keeps instead of counted row by row, so a slice costs a few index probes per
-- partition however long its backlog is (docs/decisions.md "Stats from counters"):
--   unconsumed = messages above the slowest position = least(message_count, last_seq - position), exact
--     unless the unconsumed range has sequence gaps (a dropped duplicate, a single deleted message);
--   processing = messages inside a live lease, counted in those leases' ranges (a batch each);
--   oldest pending = the first message above the slowest cursor (created_at never decreases along a
--     partition); dead letters are counted (they are few).
WITH p AS MATERIALIZED (
    SELECT id, queue_id, last_seq, message_count FROM partitions WHERE id > $1::uuid ORDER BY id LIMIT $2
), g AS MATERIALIZED (
    -- The groups of the slice's queues (migration 0021): the slowest position on a partition is the
    -- lowest of theirs, 0 where one of them never read it.
    SELECT qs.queue_id, g.consumer_group
    FROM (SELECT DISTINCT queue_id FROM p) qs CROSS JOIN LATERAL queue_groups(qs.queue_id) g
), c AS (
    SELECT p.queue_id, p.message_count AS total,
           greatest(0, least(p.message_count, p.last_seq - f.low)) AS unconsumed,
           pr.n AS processing, o.created_at AS oldest, d.dlq, d.dlq_consumed
    FROM p
    -- The slowest position (a probe per group of the queue), and whether any lease is live (one read of
    -- the partition's consumer rows). The probes below run only where they can find something (a
    -- one-time filter each), so a partition with nothing unconsumed and nothing leased costs these
    -- reads and the dead-letter probe.
    CROSS JOIN LATERAL (
        SELECT coalesce(min(coalesce(pc.cursor_seq, 0)), 0) AS low
        FROM g LEFT JOIN partition_consumers pc ON pc.partition_id = p.id AND pc.consumer_group = g.consumer_group
        WHERE g.queue_id = p.queue_id) lo
    CROSS JOIN LATERAL (
        SELECT lo.low, coalesce(bool_or(pc.lease_expires_at > now()), false) AS leased
        FROM partition_consumers pc WHERE pc.partition_id = p.id) f
    CROSS JOIN LATERAL (
        SELECT count(DISTINCT m.seq) AS n
        FROM partition_consumers pc
        CROSS JOIN LATERAL (
            SELECT m.seq FROM messages m
            WHERE m.partition_id = pc.partition_id AND m.seq > pc.cursor_seq AND m.seq <= pc.delivered_seq
            ORDER BY m.seq) m
        WHERE f.leased AND pc.partition_id = p.id AND pc.lease_expires_at > now()) pr
    LEFT JOIN LATERAL (
        SELECT m.created_at FROM messages m
        WHERE p.last_seq > f.low AND m.partition_id = p.id AND m.seq > f.low
        ORDER BY m.seq LIMIT 1) o ON true
    CROSS JOIN LATERAL (
        SELECT count(DISTINCT dl.message_seq) AS dlq,
               count(DISTINCT dl.message_seq) FILTER (WHERE dl.message_seq <= f.low) AS dlq_consumed
        FROM dead_letters dl WHERE dl.partition_id = p.id) d
)
SELECT c.queue_id, sum(c.total)::bigint, sum(greatest(0, c.unconsumed - c.processing))::bigint, sum(c.processing)::bigint,
       sum(c.total - c.unconsumed - c.dlq_consumed)::bigint, sum(c.dlq)::bigint, min(c.oldest),
       (SELECT id FROM p ORDER BY id DESC LIMIT 1), (SELECT count(*) FROM p)
FROM c
GROUP BY c.queue_id

-- name: StatsWrite :exec
-- Rewrites queue_stats from a pass's per-queue sums (a queue without any: zeros). The queues are
-- key-share locked first: a queue deleted while the pass ran is skipped (its row is gone or waits for
-- this statement) instead of failing the insert's foreign key.
WITH live AS (
    SELECT id FROM queues ORDER BY id FOR KEY SHARE
)
INSERT INTO queue_stats AS s (queue_id, total, pending, processing, completed, dead_letter, oldest_pending_at, refreshed_at)
SELECT l.id, coalesce(t.total, 0), coalesce(t.pending, 0), coalesce(t.processing, 0), coalesce(t.completed, 0),
       coalesce(t.dead_letter, 0), t.oldest, now()
FROM live l
LEFT JOIN unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::timestamptz[])
    AS t(queue_id, total, pending, processing, completed, dead_letter, oldest) ON t.queue_id = l.id
ORDER BY l.id
ON CONFLICT (queue_id) DO UPDATE SET
    total = EXCLUDED.total, pending = EXCLUDED.pending, processing = EXCLUDED.processing,
    completed = EXCLUDED.completed, dead_letter = EXCLUDED.dead_letter,
    oldest_pending_at = EXCLUDED.oldest_pending_at, refreshed_at = EXCLUDED.refreshed_at

-- name: QueueGauges :many
-- The queue gauges of /metrics after every stats pass: the rolled-up counts only. (The listing,
-- QueueList, also counts every partition and consumer row of every queue, which the gauges never show.)
SELECT q.name, coalesce(s.pending, 0), coalesce(s.processing, 0), s.oldest_pending_at
FROM queues q
LEFT JOIN queue_stats s ON s.queue_id = q.id
ORDER BY q.created_at DESC, q.name
LIMIT $1

-- name: QueueOpsAdd :exec
-- Adds one broker's counter deltas for the current minute.
INSERT INTO queue_ops_history AS h (bucket, queue_name, broker_id, push_requests, push_messages, pop_requests,
                                    pop_messages, pop_empty, ack_success, ack_failed, dlq, lag_sum_ms, lag_count, lag_max_ms)
SELECT date_trunc('minute', $1::timestamptz), t.*
FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
            $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[]) AS t
ON CONFLICT (bucket, queue_name, broker_id) DO UPDATE SET
    push_requests = h.push_requests + EXCLUDED.push_requests, push_messages = h.push_messages + EXCLUDED.push_messages,
    pop_requests = h.pop_requests + EXCLUDED.pop_requests, pop_messages = h.pop_messages + EXCLUDED.pop_messages,
    pop_empty = h.pop_empty + EXCLUDED.pop_empty, ack_success = h.ack_success + EXCLUDED.ack_success,
    ack_failed = h.ack_failed + EXCLUDED.ack_failed, dlq = h.dlq + EXCLUDED.dlq,
    lag_sum_ms = h.lag_sum_ms + EXCLUDED.lag_sum_ms, lag_count = h.lag_count + EXCLUDED.lag_count,
    lag_max_ms = greatest(h.lag_max_ms, EXCLUDED.lag_max_ms)
