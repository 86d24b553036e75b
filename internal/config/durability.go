package config

// DurabilityConfig holds the durability settings.
type DurabilityConfig struct{}

var durabilityVars = []Var{}

func (c *Config) validateDurability() error { return nil }
