-- name: LeaseExtend :many
-- Extends every partition lease held under the lease id; never shortens one. live = the lease was
-- still running (an expired or released lease is reported, not revived).
-- The lease is found without an index on lease_id (0013_lease_lookup.sql): the id's first 8 bytes are
-- those of its head partition's id (pop.sql), so the head's rows are one range of
-- partition_consumers_pkey; the head's row lists the other partitions of a multi-partition pop.
SELECT pc.partition_id,
       coalesce(pc.lease_expires_at > coalesce($3::timestamptz, now()), false) AS live, -- a released lease keeps its id, expiry NULL
       CASE WHEN pc.lease_expires_at > coalesce($3::timestamptz, now())
            THEN greatest(pc.lease_expires_at, coalesce($3::timestamptz, now()) + make_interval(secs => $2)) END AS expires
FROM partition_consumers h
CROSS JOIN LATERAL unnest(coalesce(h.lease_partitions, ARRAY[h.partition_id])) AS x(partition_id)
JOIN partition_consumers pc ON pc.partition_id = x.partition_id AND pc.consumer_group = h.consumer_group
WHERE h.partition_id BETWEEN encode(substring(uuid_send($1::uuid) FROM 1 FOR 8) || '\x0000000000000000'::bytea, 'hex')::uuid
                         AND encode(substring(uuid_send($1::uuid) FROM 1 FOR 8) || '\xffffffffffffffff'::bytea, 'hex')::uuid
  AND h.lease_id = $1 AND pc.lease_id = $1
ORDER BY pc.partition_id
FOR UPDATE OF pc

-- name: LeaseExtensionApply :exec
-- $4: the partitions LeaseExtend found (and locked).
UPDATE partition_consumers
SET lease_expires_at = greatest(lease_expires_at, coalesce($3::timestamptz, now()) + make_interval(secs => $2))
WHERE partition_id = ANY ($4::uuid[]) AND lease_id = $1 AND lease_expires_at > coalesce($3::timestamptz, now())
