-- name: JobTryLock :one
-- Transaction-scoped: one broker does each background pass, the others skip it.
SELECT pg_try_advisory_xact_lock($1)

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

-- name: VacuumPendingPartitions :exec
-- Leaves the table's trailing empty pages (TRUNCATE false): truncating needs an exclusive lock of a
-- table every pop and push uses, and a table shrunk to a page or two makes the planner cost its lookups
-- as if it would stay that small (docs/performance.md, Known issue 5).
VACUUM (SKIP_LOCKED, TRUNCATE false) pending_partitions
