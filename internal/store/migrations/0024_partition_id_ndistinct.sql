-- A lookup of one message by (partition_id, transaction_id) (MessageGet, MessageDelete, the traces, the
-- push's duplicate probe, the ack's lookup of a message outside its lease) can be served by the unique
-- (partition_id, transaction_id) index or by messages_pkey (partition_id, seq) on partition_id alone.
-- Statistics taken while most partitions held one message (a queue of many one-message partitions, or
-- what autovacuum's analyze records after a large queue was deleted) give both the same one-row
-- estimate; the smaller index wins, and once partitions grow again the plan a connection kept reads a
-- whole partition per lookup (docs/performance.md, Known issue 5: 4 000-5 000 rows read per lookup in
-- TestKeyLookupPlansAfterOneMessagePerPartition). No statement form breaks that tie: both indexes start
-- with partition_id, and the Sort an ORDER BY adds to messages_pkey's path costs nothing for one row.
-- A fixed ratio of one distinct partition_id per two rows makes a partition hold at least two messages
-- to the planner, so probing messages_pkey reads two heap rows against the unique index's one and
-- loses. Reads of a partition's messages by seq have only messages_pkey to use either way.
ALTER TABLE messages ALTER COLUMN partition_id SET (n_distinct = -0.5);

-- The option takes effect at the table's next ANALYZE; a plan built before it keeps the tie until then.
ANALYZE messages;
