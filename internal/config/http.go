package config

import (
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
	// MaxConnections caps the open client connections (MAX_CONNECTIONS); 0: the broker derives it from
	// its open-file limit.
	MaxConnections int
}
