package config

import (
	"fmt"
	"time"
)

// JobsConfig holds the intervals and bounds of the background jobs: statistics, retention, the
// vacuum of pending_partitions and the analyze of the tables that outgrew their statistics.
type JobsConfig struct {
	StatsInterval        time.Duration
	VacuumInterval       time.Duration // 0: no vacuum job
	AnalyzeInterval      time.Duration // 0: no analyze job
	RetentionInterval    time.Duration
	RetentionBatchSize   int
	PartitionCleanupDays int
	MetricsRetentionDays int
	MetricsMaxQueues     int // distinct queue label values before the __overflow__ label
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
