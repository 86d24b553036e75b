-- name: LeaseSummary :one
SELECT count(*) FILTER (WHERE lease_expires_at > coalesce($1::timestamptz, now())),
       count(DISTINCT partition_id) FILTER (WHERE lease_expires_at > coalesce($1::timestamptz, now())),
       coalesce(sum(delivered_count) FILTER (WHERE lease_expires_at > coalesce($1::timestamptz, now())), 0)::bigint
FROM partition_consumers

-- name: DeadLetterTopErrors :many
SELECT coalesce(error_message, ''), count(*) FROM dead_letters GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5

-- name: DeadLetterTotals :one
SELECT count(*), count(DISTINCT partition_id) FROM dead_letters
