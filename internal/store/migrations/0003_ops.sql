-- Operations surface: rolled-up queue statistics, per-broker operation counters, message traces and the
-- retention history. Unqualified: the migrator sets search_path to the broker's schema.

-- Rolled-up counts per queue, rewritten by the stats job every STATS_INTERVAL_MS (one broker at a time).
-- The listings read this table instead of counting messages.
CREATE TABLE queue_stats (
    queue_id     uuid PRIMARY KEY REFERENCES queues(id) ON DELETE CASCADE,
    total        bigint NOT NULL DEFAULT 0,
    pending      bigint NOT NULL DEFAULT 0,
    processing   bigint NOT NULL DEFAULT 0,
    completed    bigint NOT NULL DEFAULT 0,
    dead_letter  bigint NOT NULL DEFAULT 0,
    oldest_pending_at timestamptz,
    refreshed_at timestamptz NOT NULL DEFAULT now()
);

-- Operation counters per (minute, queue, broker): every broker adds its own deltas, readers sum.
CREATE TABLE queue_ops_history (
    bucket        timestamptz NOT NULL,
    queue_name    text NOT NULL,
    broker_id     text NOT NULL,
    push_requests bigint NOT NULL DEFAULT 0,
    push_messages bigint NOT NULL DEFAULT 0,
    pop_requests  bigint NOT NULL DEFAULT 0,
    pop_messages  bigint NOT NULL DEFAULT 0,
    pop_empty     bigint NOT NULL DEFAULT 0,
    ack_success   bigint NOT NULL DEFAULT 0,
    ack_failed    bigint NOT NULL DEFAULT 0,
    dlq           bigint NOT NULL DEFAULT 0,
    lag_sum_ms    bigint NOT NULL DEFAULT 0,
    lag_count     bigint NOT NULL DEFAULT 0,
    lag_max_ms    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, queue_name, broker_id)
);

-- Application trace events attached to a message; they disappear with it.
CREATE TABLE message_traces (
    id             uuid PRIMARY KEY,
    partition_id   uuid NOT NULL,
    transaction_id text NOT NULL,
    message_id     uuid NOT NULL,
    event_type     text NOT NULL DEFAULT 'info',
    data           jsonb NOT NULL,
    consumer_group text,
    worker_id      text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (partition_id, transaction_id) REFERENCES messages (partition_id, transaction_id) ON DELETE CASCADE
);
CREATE INDEX message_traces_message_idx ON message_traces (partition_id, transaction_id, created_at);

CREATE TABLE message_trace_names (
    trace_id   uuid NOT NULL REFERENCES message_traces(id) ON DELETE CASCADE,
    trace_name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (trace_id, trace_name)
);
CREATE INDEX message_trace_names_name_idx ON message_trace_names (trace_name, created_at);

-- One row per deletion batch of the retention job (kept METRICS_RETENTION_DAYS).
CREATE TABLE retention_history (
    id           bigserial PRIMARY KEY,
    queue_name   text,
    kind         text NOT NULL, -- retention | completed_retention | partition_cleanup | metrics_cleanup
    deleted      bigint NOT NULL,
    executed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX retention_history_time_idx ON retention_history (executed_at);

CREATE INDEX ops_dead_letters_partition_seq_idx ON dead_letters (partition_id, message_seq);
