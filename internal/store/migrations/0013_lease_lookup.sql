-- A claim no longer changes an indexed column of partition_consumers (issue 14), so its update can be
-- HOT: the new row version goes on the same page and no index gets an entry. The index on lease_id was
-- the one column a claim changed; with it, every claim inserted one entry into each of the table's three
-- indexes (about 120 µs of PostgreSQL time per pop and ack in a fan-out loop; fanout-g10 deliveries
-- 7 374 vs 4 986 per second with it dropped, same run).
-- A lease is found from its id alone another way: the id's first 8 bytes are those of the id of the
-- lowest partition its pop claimed (the head; pop.sql), so the head's rows are one range of
-- partition_consumers_pkey, and the head's row lists the partitions of a multi-partition pop
-- (lease.sql: LeaseExtend).
DROP INDEX partition_consumers_lease_idx;

-- The partitions claimed under the row's lease, ascending, when its pop claimed more than one and this
-- is its head; NULL otherwise.
ALTER TABLE partition_consumers ADD COLUMN lease_partitions uuid[];
