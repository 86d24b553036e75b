-- partitions.message_count: how many messages a partition stores, kept by the statements that insert
-- and delete them, so that the stats and queue-detail counts read a column instead of counting every
-- stored message of every partition.
ALTER TABLE partitions ADD COLUMN message_count bigint NOT NULL DEFAULT 0;

UPDATE partitions p SET message_count = (SELECT count(*) FROM messages m WHERE m.partition_id = p.id);
