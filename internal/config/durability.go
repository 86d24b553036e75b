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

var durabilityVars = []Var{
	{"FILE_BUFFER_DIR", "./queen-spool", "directory of the disk spool that keeps pushes while PostgreSQL is unreachable or push maintenance is on (one per broker)", false,
		strVar(func(c *Config) *string { return &c.Durability.SpoolDir })},
	{"FILE_BUFFER_FLUSH_MS", "100", "ms between attempts to replay the spool into PostgreSQL", false,
		msVar(func(c *Config) *time.Duration { return &c.Durability.FlushInterval })},
	{"FILE_BUFFER_MAX_BATCH", "100", "spooled pushes replayed per database round-trip", false,
		intVar(func(c *Config) *int { return &c.Durability.ReplayBatch })},
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
