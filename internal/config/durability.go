package config

import (
	"fmt"
	"time"
)

// DurabilityConfig holds the disk spool settings.
type DurabilityConfig struct {
	SpoolDir      string
	FlushInterval time.Duration
	ReplayBatch   int
}

func (c *Config) validateDurability() error {
	if c.Durability.SpoolDir == "" {
		return fmt.Errorf("config: FILE_BUFFER_DIR: must not be empty")
	}
	if c.Durability.FlushInterval <= 0 {
		return fmt.Errorf("config: FILE_BUFFER_FLUSH_MS: must be positive")
	}
	if c.Durability.ReplayBatch < 1 {
		return fmt.Errorf("config: FILE_BUFFER_MAX_BATCH: must be at least 1")
	}
	return nil
}
