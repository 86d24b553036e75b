-- The proxy's own state: plans, clusters (tenant cells), API keys, dashboard sessions, usage counters.
-- Tables are created unqualified; the connection's search_path is the proxy schema (default queen_proxy).

CREATE TABLE plans (
    id                       bigserial PRIMARY KEY,
    name                     text NOT NULL UNIQUE,
    max_payload_bytes        bigint  NOT NULL DEFAULT 1048576,
    max_batch_items          integer NOT NULL DEFAULT 10000,
    request_rate             double precision NOT NULL DEFAULT 0, -- requests per second; 0 = unlimited
    request_burst            double precision NOT NULL DEFAULT 0, -- 0 = one second's worth (at least 1)
    message_rate             double precision NOT NULL DEFAULT 0, -- pushed items per second; 0 = unlimited
    message_burst            double precision NOT NULL DEFAULT 0,
    parked_slots             integer NOT NULL DEFAULT 0,          -- concurrent wait=true pops; 0 = unlimited
    monthly_message_quota    bigint  NOT NULL DEFAULT 0,          -- 0 = unlimited
    storage_quota_bytes      bigint  NOT NULL DEFAULT 0,          -- 0 = unlimited
    max_queues               integer NOT NULL DEFAULT 0,          -- 0 = unlimited
    max_partitions_per_queue integer NOT NULL DEFAULT 0,          -- 0 = unlimited
    max_retention_seconds    bigint  NOT NULL DEFAULT 0,          -- 0 = unlimited
    feature_streams          boolean NOT NULL DEFAULT false,
    feature_traces           boolean NOT NULL DEFAULT false,
    feature_operator         boolean NOT NULL DEFAULT false,      -- maintenance and stats-refresh routes
    created_at               timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE clusters (
    id                 bigserial PRIMARY KEY,
    name               text NOT NULL UNIQUE,
    upstream_url       text NOT NULL,
    state              text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'suspended', 'deleting')),
    plan_id            bigint NOT NULL REFERENCES plans (id),
    billing_hold       boolean NOT NULL DEFAULT false,
    storage_bytes_used bigint NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cluster_hosts (
    host       text PRIMARY KEY, -- lower-case, without port
    cluster_id bigint NOT NULL REFERENCES clusters (id) ON DELETE CASCADE
);

CREATE TABLE api_keys (
    id         uuid PRIMARY KEY,
    cluster_id bigint NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name       text NOT NULL DEFAULT '',
    key_hash   bytea NOT NULL UNIQUE, -- sha256 of the whole secret token
    roles      text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    cluster_id bigint NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE,
    subject    text NOT NULL,
    roles      text[] NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE usage_monthly (
    cluster_id bigint NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    month      text   NOT NULL, -- YYYY-MM (UTC)
    messages   bigint NOT NULL DEFAULT 0,
    bytes      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (cluster_id, month)
);

-- Queues and partitions seen through the proxy, for the queue/partition ceilings.
CREATE TABLE known_partitions (
    cluster_id bigint NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    queue      text NOT NULL,
    partition  text NOT NULL,
    PRIMARY KEY (cluster_id, queue, partition)
);
