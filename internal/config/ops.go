package config

// OpsConfig holds the ops settings.
type OpsConfig struct{}

var opsVars = []Var{}

func (c *Config) validateOps() error { return nil }
