-- name: JobTryLock :one
-- Transaction-scoped: one broker does each background pass, the others skip it.
SELECT pg_try_advisory_xact_lock($1)
