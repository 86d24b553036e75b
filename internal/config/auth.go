package config

// AuthConfig holds the auth settings.
type AuthConfig struct{}

var authVars = []Var{}

func (c *Config) validateAuth() error { return nil }
