-- name: LeaseExtend :many
-- Extends every partition lease held under the lease id; never shortens one. live = the lease was
-- still running (an expired or released lease is reported, not revived).
SELECT pc.partition_id,
       coalesce(pc.lease_expires_at > coalesce($3::timestamptz, now()), false) AS live, -- a released lease keeps its id, expiry NULL
       CASE WHEN pc.lease_expires_at > coalesce($3::timestamptz, now())
            THEN greatest(pc.lease_expires_at, coalesce($3::timestamptz, now()) + make_interval(secs => $2)) END AS expires
FROM partition_consumers pc
WHERE pc.lease_id = $1
ORDER BY pc.partition_id
FOR UPDATE

-- name: LeaseExtensionApply :exec
UPDATE partition_consumers
SET lease_expires_at = greatest(lease_expires_at, coalesce($3::timestamptz, now()) + make_interval(secs => $2))
WHERE lease_id = $1 AND lease_expires_at > coalesce($3::timestamptz, now())
