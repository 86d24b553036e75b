-- The ids of committed stream cycles (POST /streams/v1/cycle): the client's optional cycle_id, or for a
-- cycle without an ack and without an id, a fingerprint of its body. A cycle records its id in the
-- transaction that applies it, so a retry of a cycle that did commit (its answer lost to a timeout or a
-- 500) finds the id and applies nothing. An id is only needed while a client may still retry: it expires
-- at expires_at, and every cycle that records an id deletes its shard's expired ones (second index).
-- In the shared queen_streams schema, like the state it guards, and dropped with its query.
CREATE TABLE IF NOT EXISTS queen_streams.cycles (
    query_id     uuid NOT NULL REFERENCES queen_streams.queries (id) ON DELETE CASCADE,
    partition_id uuid NOT NULL,
    cycle_id     text NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (query_id, partition_id, cycle_id)
);

CREATE INDEX IF NOT EXISTS cycles_expires_at_idx ON queen_streams.cycles (query_id, partition_id, expires_at);
