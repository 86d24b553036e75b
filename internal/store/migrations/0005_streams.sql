-- Streams: the registry of stream queries and their per-(query, source partition, key) state.
-- This schema is a public surface (users and the streams test suites query it with plain SQL), so it
-- is named explicitly and does NOT follow QUEEN_SCHEMA: its name and columns are fixed by the contract.
-- Several broker schemas in one database share it, hence IF NOT EXISTS throughout.
CREATE SCHEMA IF NOT EXISTS queen_streams;

CREATE TABLE IF NOT EXISTS queen_streams.queries (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text NOT NULL UNIQUE,
    source_queue text NOT NULL,
    sink_queue   text,
    config_hash  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- partition_id has no foreign key on purpose: deleting or cleaning up a source partition must not
-- silently drop the aggregates computed from it.
CREATE TABLE IF NOT EXISTS queen_streams.state (
    query_id     uuid NOT NULL REFERENCES queen_streams.queries (id) ON DELETE CASCADE,
    partition_id uuid NOT NULL,
    key          text NOT NULL,
    value        jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (query_id, partition_id, key)
);

CREATE INDEX IF NOT EXISTS state_updated_at_idx ON queen_streams.state (updated_at);
