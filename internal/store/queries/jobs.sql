-- name: JobTryLock :one
-- Transaction-scoped: one broker does each background pass ($1 names the job), the others skip it.
-- Advisory locks are the database's, not the schema's: the key hashes the schema with the job, so two
-- brokers serving different schemas of one database do not take each other's passes for their own.
SELECT pg_try_advisory_xact_lock(hashtextextended(current_schema() || ':' || $1::text, 0))

-- name: PendingDeadRows :one
-- Whether pending_partitions holds at least as many dead rows as live ones, and at least $1. Each claim
-- moves a row to the back of its line (a new index entry; the old one stays, dead, at the front, where
-- every wildcard pop starts), and consuming or deleting a queue deletes its rows: autovacuum's defaults
-- let pops walk hundreds of thousands of dead entries for up to a minute. Only a role that may vacuum
-- the table (its owner's member; VACUUM would skip it with a warning) is told to.
SELECT coalesce(bool_or(s.n_dead_tup >= greatest($1::bigint, s.n_live_tup)), false)
FROM pg_stat_user_tables s
JOIN pg_class c ON c.oid = s.relid
WHERE s.schemaname = current_schema() AND s.relname = 'pending_partitions'
  AND pg_has_role(c.relowner, 'MEMBER')

-- name: PendingLineSample :one
-- The counters the vacuum job reads the pops' walk from (store.PendingLine): the cumulative scans,
-- index entries added and pages read of the line index, whose differences between two samples give the
-- pages a descent of the index read, and the index's size. Every scan of pending_partitions_line_idx is
-- a step of a wildcard pop's walk; an INSERT, or an UPDATE that moves a row in its line (never a HOT
-- one: ready_at is indexed), adds an entry; each is one descent. No row when the table or the index is
-- not there.
SELECT i.idx_scan, s.n_tup_ins + s.n_tup_upd - s.n_tup_hot_upd, io.idx_blks_hit + io.idx_blks_read,
       pg_relation_size(i.indexrelid) / current_setting('block_size')::bigint
FROM pg_stat_user_tables s
JOIN pg_stat_user_indexes i ON i.relid = s.relid AND i.indexrelname = 'pending_partitions_line_idx'
JOIN pg_statio_user_indexes io ON io.indexrelid = i.indexrelid
WHERE s.schemaname = current_schema() AND s.relname = 'pending_partitions'

-- name: VacuumPendingPartitions :exec
-- Leaves the table's trailing empty pages (TRUNCATE false): truncating needs an exclusive lock of a
-- table every pop and push uses, and a table shrunk to a page or two makes the planner cost its lookups
-- as if it would stay that small (docs/performance.md, Known issue 5).
-- %s is the sanitized pending_partitions of the broker's schema: VACUUM runs outside any transaction,
-- so under transaction pooling no search_path of the broker's applies to it (store/pooling.go).
VACUUM (SKIP_LOCKED, TRUNCATE false) %s

-- name: StatisticsOutgrown :many
-- Those of tables $1 whose live rows (pg_stat_user_tables, counted as rows are written) number at least
-- $2 and at least $3 times what their statistics say (pg_class.reltuples, set by the last ANALYZE or
-- VACUUM; -1 before either), while their statistics count fewer than $4 rows. Only tables a role may
-- analyze (its owner's member) are named.
SELECT s.relname
FROM pg_stat_user_tables s
JOIN pg_class c ON c.oid = s.relid
WHERE s.schemaname = current_schema() AND s.relname = ANY($1::text[])
  AND pg_has_role(c.relowner, 'MEMBER')
  AND s.n_live_tup >= greatest($2::bigint, $3::float8 * c.reltuples)
  AND c.reltuples < $4::float8
ORDER BY s.relname

-- name: AnalyzeTable :exec
-- %s is the sanitized table name. SKIP_LOCKED: a table another session is analyzing or vacuuming is
-- left to it.
ANALYZE (SKIP_LOCKED) %s
