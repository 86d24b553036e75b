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
-- Inside the transaction of a pop, push or ack: run the prepared statements with their generic plan.
-- They are built so that the generic plan is the right one at any size (index walks bounded by the
-- batch), and re-planning a statement of this size on every call cost more than running it (measured
-- with pg_stat_statements.track_planning: 6.6 ms of planning per pop against 3.9 ms of execution).
-- $1 false also lets the commit return before its WAL flush (see Pop).
SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
       set_config('synchronous_commit', CASE WHEN $1::bool THEN current_setting('synchronous_commit') ELSE 'off' END, true)
