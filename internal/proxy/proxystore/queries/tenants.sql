-- name: CreatePlan :one
INSERT INTO plans (name, max_payload_bytes, max_batch_items, request_rate, request_burst, message_rate,
                   message_burst, parked_slots, monthly_message_quota, storage_quota_bytes, max_queues,
                   max_partitions_per_queue, max_retention_seconds, feature_streams, feature_traces,
                   feature_operator)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
RETURNING id

-- name: PlanIDByName :one
SELECT id FROM plans WHERE name = $1

-- name: CreateCluster :one
INSERT INTO clusters (name, upstream_url, state, plan_id, billing_hold)
VALUES ($1, $2, $3, $4, $5)
RETURNING id

-- name: AddClusterHost :exec
INSERT INTO cluster_hosts (host, cluster_id) VALUES ($1, $2)

-- name: UpdateCluster :execrows
-- NULL arguments leave a column unchanged.
UPDATE clusters SET
    upstream_url = coalesce($2, upstream_url),
    state        = coalesce($3, state),
    plan_id      = coalesce($4, plan_id),
    billing_hold = coalesce($5, billing_hold),
    storage_bytes_used = coalesce($6, storage_bytes_used)
WHERE name = $1

-- name: ClusterByHost :one
SELECT c.id, c.name, c.upstream_url, c.state, c.billing_hold, c.storage_bytes_used,
       p.id, p.name, p.max_payload_bytes, p.max_batch_items, p.request_rate, p.request_burst, p.message_rate,
       p.message_burst, p.parked_slots, p.monthly_message_quota, p.storage_quota_bytes, p.max_queues,
       p.max_partitions_per_queue, p.max_retention_seconds, p.feature_streams, p.feature_traces,
       p.feature_operator
FROM cluster_hosts h
JOIN clusters c ON c.id = h.cluster_id
JOIN plans p ON p.id = c.plan_id
WHERE h.host = $1

-- name: ClusterIDByName :one
SELECT id FROM clusters WHERE name = $1

-- name: ClusterAndKeyByHost :one
-- One round trip for the hot path: the cluster of a Host and, when it matches, the active key.
SELECT c.id, c.name, c.upstream_url, c.state, c.billing_hold, c.storage_bytes_used,
       p.id, p.name, p.max_payload_bytes, p.max_batch_items, p.request_rate, p.request_burst, p.message_rate,
       p.message_burst, p.parked_slots, p.monthly_message_quota, p.storage_quota_bytes, p.max_queues,
       p.max_partitions_per_queue, p.max_retention_seconds, p.feature_streams, p.feature_traces,
       p.feature_operator,
       k.id, k.roles
FROM cluster_hosts h
JOIN clusters c ON c.id = h.cluster_id
JOIN plans p ON p.id = c.plan_id
LEFT JOIN api_keys k ON k.cluster_id = c.id AND k.key_hash = $2 AND k.revoked_at IS NULL
WHERE h.host = $1
