-- The statistics pass follows what changed instead of visiting every partition (docs/decisions.md
-- "Stats from counters"). Each broker notes the partitions its pushes, pops, acks and admin actions
-- touched and hands them over in stats_dirty; the pass recomputes those partitions (and the ones whose
-- counts depend on time: a live lease), keeps each partition's counts in partition_stats, and adds the
-- difference to the queue's row of queue_stats in the same statement, so queue_stats is always the sum
-- of partition_stats.

CREATE TABLE partition_stats (
    partition_id uuid PRIMARY KEY,
    queue_id     uuid NOT NULL,
    total        bigint NOT NULL,
    pending      bigint NOT NULL,
    processing   bigint NOT NULL,
    completed    bigint NOT NULL,
    dead_letter  bigint NOT NULL,
    oldest_at    timestamptz
);
-- No foreign keys: a partition deleted by retention leaves its row for the pass to subtract, and a
-- deleted queue's rows are deleted by DeleteQueue. The oldest pending message of a queue is the
-- smallest oldest_at of its partitions: an index probe, not a scan.
CREATE INDEX partition_stats_queue_oldest_idx ON partition_stats (queue_id, oldest_at);
-- Leased partitions are recomputed at every pass: a lease ends by time, without a write.
CREATE INDEX partition_stats_processing_idx ON partition_stats (partition_id) WHERE processing > 0;

CREATE TABLE stats_dirty (
    partition_id uuid PRIMARY KEY
);

-- Every partition is recomputed once, by the first pass after this migration, from zero.
INSERT INTO stats_dirty SELECT id FROM partitions;
UPDATE queue_stats SET total = 0, pending = 0, processing = 0, completed = 0, dead_letter = 0, oldest_pending_at = NULL;

-- When the latest pass ended (one row): the listing's statsAt for every queue created before it.
CREATE TABLE stats_pass (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    at timestamptz NOT NULL
);
