-- partition_counts (0009) measured a partition against its lowest existing cursor, so it left out the
-- groups that never read the partition. partition_counts_at (0021) measures against the lowest position
-- of every group of the queue and has replaced it in every query; the old rule goes with it.
DROP FUNCTION IF EXISTS partition_counts(uuid, bigint);
