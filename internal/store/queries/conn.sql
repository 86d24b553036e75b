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
