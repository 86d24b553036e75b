package config

import "time"

// HTTPConfig bounds what one client connection may hold: a client that sends its headers or body
// slowly, or idles, cannot keep a connection (and so a graceful shutdown) forever. No write timeout:
// long-poll pops legitimately answer after up to POP_MAX_TIMEOUT_MS.
type HTTPConfig struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// DBStopTimeout is how long shutdown waits for the embedded PostgreSQL to stop, counted apart from
	// SHUTDOWN_TIMEOUT_MS so that slow clients can never leave the database running.
	DBStopTimeout time.Duration
}

var httpVars = []Var{
	{"HTTP_READ_HEADER_TIMEOUT_MS", "10000", "ms a client may take to send a request's headers", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.ReadHeaderTimeout })},
	{"HTTP_READ_TIMEOUT_MS", "120000", "ms a client may take to send a whole request, body included (0 = no limit)", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.ReadTimeout })},
	{"HTTP_IDLE_TIMEOUT_MS", "60000", "ms an idle keep-alive connection stays open", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.IdleTimeout })},
	{"QUEEN_DB_STOP_TIMEOUT_MS", "30000", "ms shutdown waits for the embedded PostgreSQL to stop (after SHUTDOWN_TIMEOUT_MS, whatever clients do); then it is stopped immediately", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.DBStopTimeout })},
}
