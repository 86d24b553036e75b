-- name: LeaseExtend :many
-- Extends every partition lease held under the lease id; never shortens one. live = the lease was
-- still running (an expired or released lease is reported, not revived).
-- The lease is found without an index on lease_id (0013_lease_lookup.sql): the id's first 8 bytes are
-- those of its head partition's id (pop.sql), so the head's rows are one range of
-- partition_consumers_pkey; the head's row lists the other partitions of a multi-partition pop.
-- Each lookup is a LATERAL subquery ordered the way partition_consumers_pkey returns it (LIMIT 1 is exact),
-- so that every plan, whatever the table's statistics, reads the primary key from its first column (as
-- ConsumerLock does in ack.sql); the rows are locked in partition order (the array is sorted).
SELECT pc.partition_id,
       coalesce(pc.lease_expires_at > coalesce($3::timestamptz, now()), false) AS live, -- a released lease keeps its id, expiry NULL
       CASE WHEN pc.lease_expires_at > coalesce($3::timestamptz, now())
            THEN greatest(pc.lease_expires_at, coalesce($3::timestamptz, now()) + make_interval(secs => $2)) END AS expires
FROM (SELECT h.consumer_group, coalesce(h.lease_partitions, ARRAY[h.partition_id]) AS parts
      FROM partition_consumers h
      WHERE h.partition_id BETWEEN encode(substring(uuid_send($1::uuid) FROM 1 FOR 8) || decode('0000000000000000', 'hex'), 'hex')::uuid
                               AND encode(substring(uuid_send($1::uuid) FROM 1 FOR 8) || decode('ffffffffffffffff', 'hex'), 'hex')::uuid
        AND h.lease_id = $1
      ORDER BY h.partition_id, h.consumer_group
      LIMIT 1) h
CROSS JOIN LATERAL unnest(h.parts) AS x(partition_id)
CROSS JOIN LATERAL (
    SELECT * FROM partition_consumers pc
    WHERE pc.partition_id = x.partition_id AND pc.consumer_group = h.consumer_group AND pc.lease_id = $1
    ORDER BY pc.partition_id, pc.consumer_group LIMIT 1
    FOR UPDATE) pc
ORDER BY pc.partition_id

-- name: LeaseExtensionApply :exec
-- $4: the partitions LeaseExtend found (and locked).
UPDATE partition_consumers
SET lease_expires_at = greatest(lease_expires_at, coalesce($3::timestamptz, now()) + make_interval(secs => $2))
WHERE partition_id = ANY ($4::uuid[]) AND lease_id = $1 AND lease_expires_at > coalesce($3::timestamptz, now())

-- name: LeaseReleaseApply :many
-- $3: the partitions LeaseExtend found (and locked) under lease $1. Ends the leases still running at
-- $2 as an ack that releases them does (expiry NULL, the lease id kept): the cursor stays where it is,
-- so the lease's messages are claimable again at once, as after its expiry.
UPDATE partition_consumers
SET lease_expires_at = NULL
WHERE partition_id = ANY ($3::uuid[]) AND lease_id = $1 AND lease_expires_at > coalesce($2::timestamptz, now())
RETURNING partition_id
