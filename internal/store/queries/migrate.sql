-- name: MigrationLock :exec
SELECT pg_advisory_xact_lock($1)

-- name: CreateSchema :exec
-- %s is the sanitized schema identifier (identifiers cannot be bind parameters).
CREATE SCHEMA IF NOT EXISTS %s

-- name: CreateMigrationsTable :exec
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

-- name: Ping :one
SELECT 1

-- name: Listen :exec
-- %s is the sanitized channel identifier.
LISTEN %s

-- name: Begin :exec
BEGIN

-- name: Commit :exec
COMMIT

-- name: Rollback :exec
ROLLBACK
