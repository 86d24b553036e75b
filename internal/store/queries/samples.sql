-- name: BrokerSampleInsert :exec
-- One broker's process sample; the same statement trims samples older than $18 days.
WITH trim AS (
    DELETE FROM broker_samples WHERE sampled_at < $1::timestamptz - make_interval(days => $18)
)
INSERT INTO broker_samples (sampled_at, broker_id, hostname, port, pid, cpu_user_pct, cpu_sys_pct, rss_mb, goroutines,
                            sched_lag_avg_ms, sched_lag_max_ms, pool_size, pool_idle, pool_active, pool_waiting,
                            parked, parked_by_queue)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)

-- name: BrokerSampleList :many
-- Samples between $1 and $2, oldest first; $3 hostname and $4 broker id filter when not NULL.
SELECT sampled_at, broker_id, hostname, port, pid, cpu_user_pct, cpu_sys_pct, rss_mb, goroutines,
       sched_lag_avg_ms, sched_lag_max_ms, pool_size, pool_idle, pool_active, pool_waiting, parked, parked_by_queue
FROM broker_samples
WHERE sampled_at >= $1 AND sampled_at <= $2
  AND ($3::text IS NULL OR hostname = $3) AND ($4::text IS NULL OR broker_id = $4)
ORDER BY sampled_at, broker_id
