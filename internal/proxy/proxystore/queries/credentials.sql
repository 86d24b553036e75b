-- name: CreateKey :exec
INSERT INTO api_keys (id, cluster_id, name, key_hash, roles) VALUES ($1, $2, $3, $4, $5)

-- name: ActiveKeyByHash :one
SELECT id, roles FROM api_keys WHERE cluster_id = $1 AND key_hash = $2 AND revoked_at IS NULL

-- name: RevokeKey :execrows
UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL

-- name: CreateSession :exec
INSERT INTO sessions (id, cluster_id, token_hash, subject, roles, expires_at) VALUES ($1, $2, $3, $4, $5, $6)

-- name: ActiveSessionByHash :one
SELECT id, subject, roles, expires_at FROM sessions
WHERE cluster_id = $1 AND token_hash = $2 AND revoked_at IS NULL AND expires_at > $3

-- name: RevokeSession :execrows
UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL
