package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
	// BodyBudget is how many bytes of large (≥ 1 MiB or unknown-length) request bodies are handled at
	// once; others wait for room (QUEEN_BODY_BUDGET_BYTES).
	BodyBudget int64
}

var httpVars = []Var{
	{"QUEEN_BODY_BUDGET_BYTES", "67108864", "bytes of large request bodies (1 MiB or more, or of unknown length) handled at once; more wait their turn, bounding memory", false,
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("not a positive byte count: %q", v)
			}
			c.HTTP.BodyBudget = n
			return nil
		}},
	{"HTTP_READ_HEADER_TIMEOUT_MS", "10000", "ms a client may take to send a request's headers", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.ReadHeaderTimeout })},
	{"HTTP_READ_TIMEOUT_MS", "120000", "ms a client may take to send a whole request, body included (0 = no limit)", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.ReadTimeout })},
	{"HTTP_IDLE_TIMEOUT_MS", "60000", "ms an idle keep-alive connection stays open", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.IdleTimeout })},
	{"QUEEN_DB_STOP_TIMEOUT_MS", "30000", "ms shutdown waits for the embedded PostgreSQL to stop (after SHUTDOWN_TIMEOUT_MS, whatever clients do); then it is stopped immediately", false,
		msVar(func(c *Config) *time.Duration { return &c.HTTP.DBStopTimeout })},
}
