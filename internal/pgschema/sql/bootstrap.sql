-- name: MigrationLock :exec
SELECT pg_advisory_xact_lock($1)

-- name: CreateSchema :exec
-- %s is the sanitized schema identifier (identifiers cannot be bind parameters).
CREATE SCHEMA IF NOT EXISTS %s

-- name: CreateMigrationsTable :exec
-- Runs with search_path set to the schema being migrated.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)

-- name: MigrationApplied :one
SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)

-- name: RecordMigration :exec
INSERT INTO schema_migrations (version, name) VALUES ($1, $2)

-- name: SchemaVersion :one
SELECT coalesce(max(version), 0) FROM schema_migrations
