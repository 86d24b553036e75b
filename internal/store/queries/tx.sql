-- name: TxPlanSettings :exec
-- Run at the start of every explicit transaction (Store.Begin: the API's transactions and the streams'
-- cycles), in the same round-trip as its BEGIN. Their statements are the hot path's (the ack's lock,
-- resolve and apply, the push's lock, bump and duplicate probe, the streams' state by key), all
-- bounded by the request, so they get the hot path's plan settings (HotPathSettings): the generic plan
-- and no sequential scans. Without them the transaction route planned custom plans from whatever the
-- statistics said, and after a large queue's deletion read the messages heap by partition_id alone
-- (AckResolve 2.4 ms and 600 buffers per call; docs/performance.md, Known issue 5). synchronous_commit
-- is left alone: these transactions carry acks and pushes. Local settings: they end with the
-- transaction, which commits or rolls back right after these statements.
SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
       set_config('enable_seqscan', 'off', true)
