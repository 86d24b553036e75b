-- The cycle ids a stream runtime attached to its committed cycles (the optional cycle_id of POST
-- /streams/v1/cycle). A cycle records its id in the transaction that applies it, so a retry of a cycle
-- that did commit (its answer lost to a timeout or a 500) finds the id and applies nothing. Rows are
-- only needed while a client may still retry: every cycle that records an id deletes its shard's ids
-- older than the retention (queries/streams.sql, StreamsForgetCycles), using the second index.
-- In the shared queen_streams schema, like the state it guards, and dropped with its query.
CREATE TABLE IF NOT EXISTS queen_streams.cycles (
    query_id     uuid NOT NULL REFERENCES queen_streams.queries (id) ON DELETE CASCADE,
    partition_id uuid NOT NULL,
    cycle_id     text NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (query_id, partition_id, cycle_id)
);

CREATE INDEX IF NOT EXISTS cycles_committed_at_idx ON queen_streams.cycles (query_id, partition_id, committed_at);
