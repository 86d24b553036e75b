-- name: StatsApply :many
-- Recomputes the counts of partitions $1 (a pass's changed partitions, docs/decisions.md "Stats from
-- counters"), stores them in partition_stats and adds the difference to each queue's queue_stats row, so
-- that queue_stats stays the sum of partition_stats; returns the queues whose row it changed. A
-- partition's counts follow partition_counts_at (migration 0021) but are derived from what the hot
-- path keeps instead of counted row by row, so a partition costs a few index probes however long its
-- backlog is:
--   unconsumed = messages above the slowest position = least(message_count, last_seq - position), exact
--     unless the unconsumed range has sequence gaps (a dropped duplicate, a single deleted message);
--   processing = messages inside a live lease, counted in those leases' ranges (a batch each);
--   oldest pending = the first message above the slowest cursor (created_at never decreases along a
--     partition); dead letters are counted (they are few).
-- A partition that no longer exists (retention removed it, or its queue was deleted) counts as zero and
-- loses its row. The queues are key-share locked by the statement before (StatsLockQueues), so none is
-- deleted between this statement's snapshot and its write; a queue already gone is left out.
WITH p AS MATERIALIZED (
    SELECT id, queue_id, last_seq, message_count FROM partitions WHERE id = ANY ($1::uuid[]) ORDER BY id
), g AS MATERIALIZED (
    -- The groups of the partitions' queues (migration 0021): the slowest position on a partition is the
    -- lowest of theirs, 0 where one of them never read it.
    SELECT qs.queue_id, g.consumer_group
    FROM (SELECT DISTINCT queue_id FROM p) qs CROSS JOIN LATERAL queue_groups(qs.queue_id) g
), c AS (
    SELECT p.id, p.queue_id, p.message_count AS total,
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
), fresh AS (
    SELECT c.id, c.queue_id, c.total, greatest(0, c.unconsumed - c.processing) AS pending, c.processing,
           c.total - c.unconsumed - c.dlq_consumed AS completed, c.dlq AS dead_letter, c.oldest
    FROM c
), old AS MATERIALIZED (
    SELECT ps.* FROM partition_stats ps WHERE ps.partition_id = ANY ($1::uuid[]) ORDER BY ps.partition_id FOR UPDATE
), gone AS (
    DELETE FROM partition_stats ps
    WHERE ps.partition_id IN (SELECT o.partition_id FROM old o WHERE NOT EXISTS (SELECT 1 FROM fresh f WHERE f.id = o.partition_id))
), put AS (
    INSERT INTO partition_stats AS ps (partition_id, queue_id, total, pending, processing, completed, dead_letter, oldest_at)
    SELECT f.id, f.queue_id, f.total, f.pending, f.processing, f.completed, f.dead_letter, f.oldest FROM fresh f ORDER BY f.id
    ON CONFLICT (partition_id) DO UPDATE SET
        total = EXCLUDED.total, pending = EXCLUDED.pending, processing = EXCLUDED.processing,
        completed = EXCLUDED.completed, dead_letter = EXCLUDED.dead_letter, oldest_at = EXCLUDED.oldest_at
    -- An unchanged partition writes nothing: no dead row, no index entry.
    WHERE (ps.total, ps.pending, ps.processing, ps.completed, ps.dead_letter, ps.oldest_at)
          IS DISTINCT FROM (EXCLUDED.total, EXCLUDED.pending, EXCLUDED.processing, EXCLUDED.completed, EXCLUDED.dead_letter, EXCLUDED.oldest_at)
), delta AS (
    SELECT d.queue_id, sum(d.total)::bigint AS total, sum(d.pending)::bigint AS pending, sum(d.processing)::bigint AS processing,
           sum(d.completed)::bigint AS completed, sum(d.dead_letter)::bigint AS dead_letter
    FROM (
        SELECT f.queue_id, f.total - coalesce(o.total, 0) AS total, f.pending - coalesce(o.pending, 0) AS pending,
               f.processing - coalesce(o.processing, 0) AS processing, f.completed - coalesce(o.completed, 0) AS completed,
               f.dead_letter - coalesce(o.dead_letter, 0) AS dead_letter
        FROM fresh f LEFT JOIN old o ON o.partition_id = f.id
        UNION ALL
        SELECT o.queue_id, -o.total, -o.pending, -o.processing, -o.completed, -o.dead_letter
        FROM old o WHERE NOT EXISTS (SELECT 1 FROM fresh f WHERE f.id = o.partition_id)
    ) d
    WHERE EXISTS (SELECT 1 FROM queues q WHERE q.id = d.queue_id)
    GROUP BY d.queue_id
)
INSERT INTO queue_stats AS s (queue_id, total, pending, processing, completed, dead_letter, refreshed_at)
SELECT d.queue_id, d.total, d.pending, d.processing, d.completed, d.dead_letter, now() FROM delta d ORDER BY d.queue_id
ON CONFLICT (queue_id) DO UPDATE SET
    total = s.total + EXCLUDED.total, pending = s.pending + EXCLUDED.pending, processing = s.processing + EXCLUDED.processing,
    completed = s.completed + EXCLUDED.completed, dead_letter = s.dead_letter + EXCLUDED.dead_letter, refreshed_at = now()
RETURNING s.queue_id

-- name: StatsLockQueues :exec
-- Key-share locks the queues of partitions $1 (and of their stored counts) before StatsApply: a queue
-- deleted meanwhile makes this statement wait for the delete, and StatsApply's snapshot then no longer
-- sees it.
SELECT 1 FROM queues q
WHERE q.id IN (SELECT p.queue_id FROM partitions p WHERE p.id = ANY ($1::uuid[])
               UNION SELECT ps.queue_id FROM partition_stats ps WHERE ps.partition_id = ANY ($1::uuid[]))
ORDER BY q.id
FOR KEY SHARE

-- name: StatsOldest :exec
-- The oldest pending message of queues $1: the smallest of their partitions' (an index probe each).
UPDATE queue_stats s SET oldest_pending_at = (
    SELECT ps.oldest_at FROM partition_stats ps
    WHERE ps.queue_id = s.queue_id AND ps.oldest_at IS NOT NULL
    ORDER BY ps.oldest_at LIMIT 1)
WHERE s.queue_id = ANY ($1::uuid[])

-- name: StatsDirtyAdd :exec
-- A broker hands over the partitions it changed ($1) and the queues whose every partition may have
-- changed ($2: a seek, a new or deleted group, retention; $3 true: every queue).
INSERT INTO stats_dirty (partition_id)
SELECT u.id FROM unnest($1::uuid[]) AS u(id)
UNION
SELECT p.id FROM partitions p
WHERE $3::bool OR (cardinality($2::text[]) > 0 AND p.queue_id IN (SELECT q.id FROM queues q WHERE q.name = ANY ($2::text[])))
ORDER BY 1
ON CONFLICT (partition_id) DO NOTHING

-- name: StatsDirtyTake :many
-- Up to $1 of the partitions handed over, taken for this pass.
DELETE FROM stats_dirty d
WHERE d.partition_id IN (SELECT partition_id FROM stats_dirty ORDER BY partition_id LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING d.partition_id

-- name: StatsLeased :many
-- The partitions whose last counts had messages leased: a lease ends by time alone.
SELECT partition_id FROM partition_stats WHERE processing > 0

-- name: StatsReconcileSlice :many
-- The next $2 partitions after $1, and the stored counts in the same id range of partitions that no
-- longer exist (past the last partition too, once the end is reached), for the sweep that recomputes
-- every partition slowly whatever was handed over; the second column says which rows are partitions.
-- The range's end is a scalar, so that both reads are bounded index ranges.
WITH p AS MATERIALIZED (
    SELECT id FROM partitions WHERE id > $1::uuid ORDER BY id LIMIT $2
)
SELECT id, true FROM p
UNION ALL
SELECT ps.partition_id, false FROM partition_stats ps
WHERE ps.partition_id > $1::uuid
  AND ps.partition_id <= (SELECT CASE WHEN (SELECT count(*) FROM p) < $2 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid
                                      ELSE (SELECT id FROM p ORDER BY id DESC LIMIT 1) END)
  AND NOT EXISTS (SELECT 1 FROM partitions x WHERE x.id = ps.partition_id)

-- name: StatsPassMark :exec
-- When the latest pass ended: every queue's counts are as of then (QueueList's statsAt).
INSERT INTO stats_pass (id, at) VALUES (true, now())
ON CONFLICT (id) DO UPDATE SET at = EXCLUDED.at

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
