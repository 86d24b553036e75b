-- seed_after is the last partition name a committed chunk of a default-mode subscription's seed took
-- (queries/groups.sql, SubscriptionSeedChunk). A seed cut short (a crash, a pop whose client went
-- away) is taken up after it by the group's next pop on any broker, so a seed longer than any one
-- request still ends; 0018's seed restarted from the first partition. NULL once seeded.
ALTER TABLE consumer_group_subscriptions ADD COLUMN seed_after text;
