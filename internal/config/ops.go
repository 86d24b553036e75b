package config

import (
	"fmt"
	"time"

	"github.com/queen-go/queen/internal/crypto"
)

// OpsConfig holds the settings of the operations surface: encryption at rest, statistics, retention.
type OpsConfig struct {
	EncryptionKey        *crypto.Key // nil: QUEEN_ENCRYPTION_KEY unset
	StatsInterval        time.Duration
	RetentionInterval    time.Duration
	RetentionBatchSize   int
	PartitionCleanupDays int
	MetricsRetentionDays int
	MetricsMaxQueues     int // distinct queue label values before the __overflow__ label
	encryptionKeyText    string
}

var opsVars = []Var{
	{"METRICS_MAX_QUEUES", "1000", "distinct queues with Prometheus series of their own; later queues share the queue=\"__overflow__\" series", false,
		intVar(func(c *Config) *int { return &c.Ops.MetricsMaxQueues })},
	{"QUEEN_ENCRYPTION_KEY", "", "64 hex characters (AES-256-GCM key) for queues with encryptionEnabled; a malformed value is a startup error", true,
		strVar(func(c *Config) *string { return &c.Ops.encryptionKeyText })},
	{"STATS_INTERVAL_MS", "10000", "ms between refreshes of the rolled-up queue statistics (listing counts are at most this old)", false,
		msVar(func(c *Config) *time.Duration { return &c.Ops.StatsInterval })},
	{"RETENTION_INTERVAL", "300000", "ms between retention passes (one broker per pass)", false,
		msVar(func(c *Config) *time.Duration { return &c.Ops.RetentionInterval })},
	{"RETENTION_BATCH_SIZE", "1000", "messages deleted per partition per retention statement", false,
		intVar(func(c *Config) *int { return &c.Ops.RetentionBatchSize })},
	{"PARTITION_CLEANUP_DAYS", "30", "days an empty partition (other than Default) may stay idle before it is deleted", false,
		intVar(func(c *Config) *int { return &c.Ops.PartitionCleanupDays })},
	{"METRICS_RETENTION_DAYS", "90", "days of operation and retention history kept", false,
		intVar(func(c *Config) *int { return &c.Ops.MetricsRetentionDays })},
}

func (c *Config) validateOps() error {
	k, err := crypto.ParseKey(c.Ops.encryptionKeyText)
	if err != nil {
		return fmt.Errorf("config: QUEEN_ENCRYPTION_KEY: %w", err)
	}
	c.Ops.EncryptionKey = k
	if c.Ops.StatsInterval <= 0 {
		return fmt.Errorf("config: STATS_INTERVAL_MS: must be positive")
	}
	if c.Ops.RetentionInterval <= 0 {
		return fmt.Errorf("config: RETENTION_INTERVAL: must be positive")
	}
	if c.Ops.RetentionBatchSize < 1 {
		return fmt.Errorf("config: RETENTION_BATCH_SIZE: must be at least 1")
	}
	if c.Ops.PartitionCleanupDays < 1 {
		return fmt.Errorf("config: PARTITION_CLEANUP_DAYS: must be at least 1")
	}
	if c.Ops.MetricsRetentionDays < 1 {
		return fmt.Errorf("config: METRICS_RETENTION_DAYS: must be at least 1")
	}
	return nil
}
