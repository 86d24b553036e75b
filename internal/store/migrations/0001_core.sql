-- Core tables: queues, partitions, messages, per-(partition, group) consumer state, dead letters,
-- and shared system state. Unqualified: the migrator runs with search_path set to the broker's own schema (QUEEN_SCHEMA).

CREATE TABLE queues (
    id                          uuid PRIMARY KEY,
    name                        text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 255),
    namespace                   text NOT NULL DEFAULT '',
    task                        text NOT NULL DEFAULT '',
    priority                    integer NOT NULL DEFAULT 0,
    lease_time                  integer NOT NULL DEFAULT 300,
    retry_limit                 integer NOT NULL DEFAULT 3,
    retry_delay                 integer NOT NULL DEFAULT 1000,
    max_size                    integer NOT NULL DEFAULT 0,
    ttl                         integer NOT NULL DEFAULT 3600,
    dead_letter_queue           boolean NOT NULL DEFAULT false,
    dlq_after_max_retries       boolean NOT NULL DEFAULT false,
    delayed_processing          integer NOT NULL DEFAULT 0,
    window_buffer               integer NOT NULL DEFAULT 0,
    retention_seconds           integer NOT NULL DEFAULT 0,
    completed_retention_seconds integer NOT NULL DEFAULT 0,
    retention_enabled           boolean NOT NULL DEFAULT false,
    encryption_enabled          boolean NOT NULL DEFAULT false,
    max_wait_time_seconds       integer NOT NULL DEFAULT 0,
    created_at                  timestamptz NOT NULL DEFAULT now()
);

-- last_seq is the in-partition order of the newest committed message. It is advanced by the pushing
-- transaction while it holds this row's lock, so sequence order equals commit order: a cursor can never
-- pass a number that a slower, still-open push will commit later.
CREATE TABLE partitions (
    id           uuid PRIMARY KEY,
    queue_id     uuid NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    last_seq     bigint NOT NULL DEFAULT 0,
    last_push_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (queue_id, name)
) WITH (fillfactor = 70);

CREATE TABLE messages (
    partition_id   uuid NOT NULL REFERENCES partitions(id) ON DELETE CASCADE,
    seq            bigint NOT NULL,
    id             uuid NOT NULL,
    transaction_id text NOT NULL,
    trace_id       uuid,
    payload        jsonb,
    producer_sub   text,
    is_encrypted   boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (partition_id, seq),
    UNIQUE (partition_id, transaction_id)
);

-- One row per (partition, consumer group): the cursor (cursor_seq, everything at or below it is consumed)
-- and the lease. lease_id survives the release of the lease (lease_expires_at NULL) so that a repeated
-- completion under the lease that delivered a message can be recognised as harmless.
CREATE TABLE partition_consumers (
    partition_id      uuid NOT NULL REFERENCES partitions(id) ON DELETE CASCADE,
    consumer_group    text NOT NULL,
    cursor_seq        bigint NOT NULL DEFAULT 0,
    lease_id          uuid,
    lease_expires_at  timestamptz,
    delivered_seq     bigint NOT NULL DEFAULT 0,
    delivered_count   integer NOT NULL DEFAULT 0,
    claim_cursor_seq  bigint NOT NULL DEFAULT 0,
    prev_lease_id          uuid,
    prev_claim_cursor_seq  bigint NOT NULL DEFAULT 0,
    prev_delivered_seq     bigint NOT NULL DEFAULT 0,
    batch_retry_count integer NOT NULL DEFAULT 0,
    retry_after       timestamptz,
    last_claimed_at   timestamptz,
    total_consumed    bigint NOT NULL DEFAULT 0,
    last_consumed_at  timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
) WITH (fillfactor = 50);

CREATE INDEX partition_consumers_lease_idx ON partition_consumers (lease_id) WHERE lease_id IS NOT NULL;

CREATE TABLE dead_letters (
    id             uuid PRIMARY KEY,
    partition_id   uuid NOT NULL REFERENCES partitions(id) ON DELETE CASCADE,
    message_seq    bigint NOT NULL,
    message_id     uuid NOT NULL,
    transaction_id text NOT NULL,
    consumer_group text NOT NULL,
    error_message  text,
    retry_count    integer NOT NULL DEFAULT 0,
    original_created_at timestamptz NOT NULL,
    failed_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (partition_id, transaction_id, consumer_group)
);

CREATE TABLE system_state (
    key        text PRIMARY KEY,
    value      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
