-- Dashboard analytics: each broker's process samples (CPU, memory, pool, scheduler latency, parked
-- long-polls per queue), written every STATS_INTERVAL_MS and read as bucketed series by the
-- worker-metrics, system-metrics and queue-parked-replicas routes.
CREATE TABLE broker_samples (
    sampled_at       timestamptz NOT NULL,
    broker_id        text NOT NULL,
    hostname         text NOT NULL,
    port             integer NOT NULL,
    pid              integer NOT NULL,
    cpu_user_pct     double precision NOT NULL,
    cpu_sys_pct      double precision NOT NULL,
    rss_mb           double precision NOT NULL,
    goroutines       integer NOT NULL,
    sched_lag_avg_ms double precision NOT NULL,
    sched_lag_max_ms double precision NOT NULL,
    pool_size        integer NOT NULL,
    pool_idle        integer NOT NULL,
    pool_active      integer NOT NULL,
    pool_waiting     integer NOT NULL,
    parked           integer NOT NULL,
    parked_by_queue  jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (sampled_at, broker_id)
);
