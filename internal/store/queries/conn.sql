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

-- name: HotPathSettings :exec
-- Inside the transaction of a pop, push or ack (and of a stats pass): run the prepared statements with their generic plan.
-- They are built so that the generic plan is the right one at any size (index walks bounded by the
-- batch), and re-planning a statement of this size on every call cost more than running it (measured
-- with pg_stat_statements.track_planning: 6.6 ms of planning per pop against 3.9 ms of execution).
-- $1 false also lets the commit return before its WAL flush (see Pop).
-- A generic plan is built once per connection, from the table sizes of that moment, and kept until the
-- next ANALYZE of a table it reads. Built while messages was small (a fresh database, or soon after a
-- queue's messages were deleted), AckResolve's plan read messages with a sequential scan inside a hash
-- join and kept doing so as the table grew: 10-12 ms and 500-800 shared buffers per ack in the fan-out
-- benchmark instead of 0.2 ms and ~100. Every statement of these transactions reads by key, bounded by
-- the batch, so sequential scans are switched off for them: the plan is an index walk whatever the
-- statistics said when it was built (docs/performance.md, "Generic plans and table growth").
SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
       set_config('synchronous_commit', CASE WHEN $1::bool THEN current_setting('synchronous_commit') ELSE 'off' END, true),
       set_config('enable_seqscan', 'off', true)
