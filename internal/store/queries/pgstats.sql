-- PostgreSQL health for the dashboard's System page, scoped to the broker's schema (search_path).

-- name: PgDatabase :one
SELECT json_build_object(
    'name', d.datname, 'sizeBytes', pg_database_size(d.datname),
    'size', pg_size_pretty(pg_database_size(d.datname)),
    'connections', d.numbackends, 'commits', d.xact_commit, 'rollbacks', d.xact_rollback,
    'blocksHit', d.blks_hit, 'blocksRead', d.blks_read,
    'cacheHitRatio', round(100.0 * d.blks_hit / nullif(d.blks_hit + d.blks_read, 0), 2),
    'deadlocks', d.deadlocks, 'tempBytes', d.temp_bytes, 'version', current_setting('server_version'))
FROM pg_stat_database d WHERE d.datname = current_database()

-- name: PgTableCache :one
-- Tables of the broker's schema (search_path): heap and index block hits versus reads.
SELECT coalesce(json_agg(t ORDER BY t."heapRead" + t."heapHit" DESC), '[]'::json) FROM (
    SELECT relname AS "table", heap_blks_hit AS "heapHit", heap_blks_read AS "heapRead",
           round(100.0 * heap_blks_hit / nullif(heap_blks_hit + heap_blks_read, 0), 2) AS "hitRatio",
           coalesce(idx_blks_hit, 0) AS "indexHit", coalesce(idx_blks_read, 0) AS "indexRead"
    FROM pg_statio_user_tables WHERE schemaname = current_schema()) t

-- name: PgIndexCache :one
SELECT coalesce(json_agg(t ORDER BY t."read" + t."hit" DESC), '[]'::json) FROM (
    SELECT relname AS "table", indexrelname AS "index", idx_blks_hit AS "hit", idx_blks_read AS "read",
           round(100.0 * idx_blks_hit / nullif(idx_blks_hit + idx_blks_read, 0), 2) AS "hitRatio"
    FROM pg_statio_user_indexes WHERE schemaname = current_schema()) t

-- name: PgTables :one
-- Per table of the schema: sizes, live/dead tuples, HOT updates and (auto)vacuum times.
SELECT coalesce(json_agg(t ORDER BY t."totalBytes" DESC), '[]'::json) FROM (
    SELECT s.relname AS "table", pg_total_relation_size(s.relid) AS "totalBytes",
           pg_size_pretty(pg_total_relation_size(s.relid)) AS "totalSize",
           pg_size_pretty(pg_relation_size(s.relid)) AS "tableSize",
           pg_size_pretty(pg_indexes_size(s.relid)) AS "indexSize",
           s.n_live_tup AS "liveTuples", s.n_dead_tup AS "deadTuples",
           round(100.0 * s.n_dead_tup / nullif(s.n_live_tup + s.n_dead_tup, 0), 2) AS "deadRatio",
           s.n_tup_upd AS "updates", s.n_tup_hot_upd AS "hotUpdates",
           round(100.0 * s.n_tup_hot_upd / nullif(s.n_tup_upd, 0), 2) AS "hotRatio",
           s.last_vacuum AS "lastVacuum", s.last_autovacuum AS "lastAutovacuum",
           s.last_autoanalyze AS "lastAutoanalyze", s.autovacuum_count AS "autovacuumCount"
    FROM pg_stat_user_tables s WHERE s.schemaname = current_schema()) t

-- name: PgActivity :one
-- Other sessions' statements, longest running first (this query's own session excluded).
SELECT coalesce(json_agg(t ORDER BY t."durationMs" DESC NULLS LAST), '[]'::json) FROM (
    SELECT pid, usename AS "user", application_name AS "application", state,
           wait_event_type AS "waitEventType", wait_event AS "waitEvent",
           round(extract(epoch FROM now() - query_start)::numeric * 1000) AS "durationMs",
           left(query, 500) AS "query"
    FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'
    LIMIT 50) t

-- name: PgSettings :one
SELECT json_object_agg(name, setting || coalesce(' ' || unit, ''))
FROM pg_settings
WHERE name IN ('shared_buffers', 'effective_cache_size', 'work_mem', 'maintenance_work_mem', 'max_connections',
               'autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor')
