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
-- Inside the transaction of a push (and of a stats pass), on the general pool: the settings the hot
-- pool's sessions carry for pops and acks (store.go, hotParams, which says why), made
-- transaction-local because the general pool's connections serve everything else with the defaults.
-- $1 false also lets the commit return before its WAL flush.
SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
       set_config('synchronous_commit', CASE WHEN $1::bool THEN current_setting('synchronous_commit') ELSE 'off' END, true),
       set_config('enable_seqscan', 'off', true)

-- name: PoolTxSettings :exec
-- Under transaction pooling (pooling.go), at the start of every transaction: a pool's session settings
-- (search_path, timezone, statement_timeout, the hot pool's plan settings) made local to the
-- transaction, since the server session behind a pooler changes from one transaction to the next.
-- %s is the list of set_config(name, value, true) calls.
SELECT %s

-- name: ReplicaPrimaryLSN :one
-- On the primary: how far its WAL goes, in bytes. A read replica that has replayed this far holds every
-- commit made before this statement ran (replica.go).
SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint

-- name: ReplicaReplayLSN :one
-- On a read replica: whether it is a standby, and how far it has replayed, in bytes (NULL on a primary).
SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint
