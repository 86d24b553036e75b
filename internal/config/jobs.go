package config

import (
	"fmt"
	"time"
)

// JobsConfig holds the intervals and bounds of the background jobs: statistics and retention.
type JobsConfig struct {
	StatsInterval        time.Duration
	RetentionInterval    time.Duration
	RetentionBatchSize   int
	PartitionCleanupDays int
	MetricsRetentionDays int
	MetricsMaxQueues     int // distinct queue label values before the __overflow__ label
}

var jobsVars = []Var{
	{"METRICS_MAX_QUEUES", "1000", "distinct queues with Prometheus series of their own; later queues share the queue=\"__overflow__\" series", false,
		intVar(func(c *Config) *int { return &c.Jobs.MetricsMaxQueues })},
	{"STATS_INTERVAL_MS", "10000", "ms between refreshes of the rolled-up queue statistics (listing counts are at most this old)", false,
		msVar(func(c *Config) *time.Duration { return &c.Jobs.StatsInterval })},
	{"RETENTION_INTERVAL", "300000", "ms between retention passes (one broker per pass)", false,
		msVar(func(c *Config) *time.Duration { return &c.Jobs.RetentionInterval })},
	{"RETENTION_BATCH_SIZE", "1000", "messages deleted per partition per retention statement", false,
		intVar(func(c *Config) *int { return &c.Jobs.RetentionBatchSize })},
	{"PARTITION_CLEANUP_DAYS", "30", "days an empty partition (other than Default) may stay idle before it is deleted", false,
		intVar(func(c *Config) *int { return &c.Jobs.PartitionCleanupDays })},
	{"METRICS_RETENTION_DAYS", "90", "days of operation and retention history kept", false,
		intVar(func(c *Config) *int { return &c.Jobs.MetricsRetentionDays })},
}

func (c *Config) validateJobs() error {
	if c.Jobs.StatsInterval <= 0 {
		return fmt.Errorf("config: STATS_INTERVAL_MS: must be positive")
	}
	if c.Jobs.RetentionInterval <= 0 {
		return fmt.Errorf("config: RETENTION_INTERVAL: must be positive")
	}
	if c.Jobs.RetentionBatchSize < 1 {
		return fmt.Errorf("config: RETENTION_BATCH_SIZE: must be at least 1")
	}
	if c.Jobs.PartitionCleanupDays < 1 {
		return fmt.Errorf("config: PARTITION_CLEANUP_DAYS: must be at least 1")
	}
	if c.Jobs.MetricsRetentionDays < 1 {
		return fmt.Errorf("config: METRICS_RETENTION_DAYS: must be at least 1")
	}
	return nil
}
