-- Consumer-group subscriptions, per-group redelivery of dead letters, and the indexes the group and
-- DLQ routes read by.

-- The first recorded subscription of a group on a queue decides where the group starts in partitions it
-- meets for the first time: mode 'all' from the beginning, 'new'/'timestamp' after subscription_ts.
CREATE TABLE consumer_group_subscriptions (
    consumer_group  text NOT NULL,
    queue_id        uuid NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
    mode            text NOT NULL CHECK (mode IN ('all', 'new', 'timestamp')),
    subscription_ts timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, queue_id)
);

-- A dead letter retried for one group: the message is served again to that group only, ahead of the
-- group's cursor, until it is acknowledged.
CREATE TABLE redeliveries (
    partition_id   uuid NOT NULL REFERENCES partitions(id) ON DELETE CASCADE,
    consumer_group text NOT NULL,
    seq            bigint NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group, seq)
);

CREATE INDEX partition_consumers_group_idx ON partition_consumers (consumer_group);
CREATE INDEX dead_letters_failed_idx ON dead_letters (failed_at DESC);
CREATE INDEX dead_letters_group_idx ON dead_letters (consumer_group, failed_at DESC);
CREATE INDEX queues_namespace_task_idx ON queues (namespace, task, priority DESC);
