-- pending_partitions_line_idx is rebuilt so that the pop's walk of a group's line is the only statement
-- it can serve, and the primary key cannot serve the walk (issue 14, docs/performance.md Known issue 16).
-- Before, both indexes held consumer_group and partition_id as plain columns, so either could take a
-- condition on those columns as a scan of a later column: the whole index. A generic plan built while
-- the statistics said the table held no live row (analyzed after a queue's deletion, before a vacuum)
-- costs every such scan at one row, and picks one by a hair's difference in cost:
--   - the walk (queries/pop.sql, line) took the primary key by consumer_group, every row of the group
--     in every queue, and sorted them, at each step: kept while the line grew to 100 000 partitions, it
--     made each 100-partition pop read 10 million rows and outlast its lease and the statement timeout;
--   - a lookup by (partition_id, consumer_group) (an ack's PendingForgetConsumed, autoAck's cleanup)
--     could take this index by partition_id, its last column: the whole index per partition.
-- Now the group is compared under the "C" collation, which the primary key's consumer_group does not
-- have (an index column matches a condition only under its own collation; equality under "C" is byte
-- equality, as under any deterministic collation), and the tie-break key is uuid_send(partition_id):
-- the same order as the uuid (both compare the 16 bytes), but an expression no lookup by partition_id
-- names. partition_id itself is only carried (INCLUDE), for index-only walks, and cannot be searched.
DROP INDEX pending_partitions_line_idx;
CREATE INDEX pending_partitions_line_idx ON pending_partitions
    (queue_id, consumer_group COLLATE "C", ready_at, uuid_send(partition_id)) INCLUDE (partition_id);
