-- name: TxPlanSettings :exec
-- Run at the start of every explicit transaction (Store.Begin: the API's transactions and the streams'
-- cycles), in the same round-trip as its BEGIN. Their statements are the hot path's (the ack's lock,
-- resolve and apply, the push's lock, bump and duplicate probe, the streams' state by key), all
-- bounded by the request, so none of them wants a sequential scan (HotPathSettings, PushPlanSettings).
-- They keep custom plans: forced to the generic plan too (as HotPathSettings does), pipeline right after
-- partitions-100000 ran 0.80 of the build without these settings (AckResolve 4.5 ms and 1 000 buffers
-- per call, its generic plan walking messages_pkey by partition_id). synchronous_commit is left alone:
-- these transactions carry acks and pushes. Local settings: they end with the transaction.
SELECT set_config('enable_seqscan', 'off', true)
