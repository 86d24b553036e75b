-- A subscription in the default mode (all) is recorded first and seeded afterwards, a chunk of
-- partitions per transaction (queries/groups.sql, SubscriptionSeedChunk), so that a new group on a
-- queue of many partitions no longer holds every partition share-locked, and its pushes waiting, for
-- the whole seed (docs/performance.md, Known issue 20). seeded is false until the last chunk
-- committed: a seed cut short (a crash, a timeout) is taken up again by the group's next pop on any
-- broker. Subscriptions recorded before this migration were seeded in their own transaction.
ALTER TABLE consumer_group_subscriptions ADD COLUMN seeded boolean NOT NULL DEFAULT true;
