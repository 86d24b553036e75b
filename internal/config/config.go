// Package config declares every environment variable the broker reads, once, with its default and
// meaning, and parses them into an immutable Config. Garbage in a variable is an error naming it.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/queen-go/queen/internal/auth"
)

// Config is the broker's effective configuration.
type Config struct {
	Host string
	Port int

	DatabaseURL string // built from DATABASE_URL or PG_*; empty = start an embedded PostgreSQL
	DataDir     string // embedded PostgreSQL data directory
	Schema      string
	// PoolMode is "session" or "transaction" (DATABASE_POOL_MODE); ListenURL the session LISTEN uses
	// (empty: DatabaseURL, or no LISTEN at all under transaction pooling).
	PoolMode  string
	ListenURL string
	// ReadURL is a streaming standby that serves the read models while its lag is at most ReadMaxLag
	// (empty: none; docs/operations.md "Read replica").
	ReadURL    string
	ReadMaxLag time.Duration

	PoolSize         int
	PushWorkers      int
	AckWorkers       int
	AcquireTimeout   time.Duration
	StatementTimeout time.Duration

	DefaultTimeout          time.Duration
	DefaultBatchSize        int
	DefaultSubscriptionMode string
	EvictionInterval        time.Duration
	MaxPollTimeout          time.Duration
	PollRecheck             time.Duration

	MaxBodyBytes    int64
	MaxBatchItems   int
	ShutdownTimeout time.Duration

	// GCPercent and MemoryLimit tune the Go collector (docs/decisions.md "Collector settings"): a
	// higher percent than Go's 100 halves the collector's CPU per pushed message, and the soft limit
	// keeps the heap that lets grow bounded.
	GCPercent   int
	MemoryLimit int64 // bytes; 0 = none

	LogLevel  string
	LogFormat string
	PprofAddr string

	HTTP       HTTPConfig       // http.go
	Auth       auth.Options     // read straight into what internal/auth takes; checked in auth.go
	Encryption EncryptionConfig // encryption.go
	Jobs       JobsConfig       // jobs.go
	Durability DurabilityConfig // durability.go
	Dashboard  DashboardConfig  // dashboard.go

	pg pgParts
}

type pgParts struct {
	url                            string
	host, port, user, password, db string
	ssl                            bool
	anySet                         bool
}

// Load builds the configuration from getenv (os.Getenv in main, a map in tests).
func Load(getenv func(string) string) (Config, error) {
	var c Config
	vars := varsOf(&c)
	for _, v := range vars {
		if v.Default != "" {
			if err := v.set(v.Default); err != nil {
				return Config{}, fmt.Errorf("config: default of %s: %w", v.Name, err)
			}
		}
	}
	c.pg.anySet = false // defaults alone do not configure a database
	for _, v := range vars {
		if s := getenv(v.Name); s != "" {
			if err := v.set(s); err != nil {
				return Config{}, fmt.Errorf("config: %s: %w", v.Name, err)
			}
		}
	}
	for _, v := range validators {
		if err := v(&c); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

func (c *Config) validate() error {
	if c.Port == 0 || c.Port > 65535 {
		return fmt.Errorf("config: PORT: out of range: %d", c.Port)
	}
	if c.GCPercent == 0 {
		return errors.New("config: QUEEN_GC_PERCENT: must be positive")
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("config: LOG_LEVEL: want debug, info, warn or error, got %q", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("config: LOG_FORMAT: want text or json, got %q", c.LogFormat)
	}
	if c.PoolSize < 2 {
		return fmt.Errorf("config: DB_POOL_SIZE: needs at least 2 connections, got %d", c.PoolSize)
	}
	if c.HTTP.MaxConnections < 0 {
		return fmt.Errorf("config: MAX_CONNECTIONS: must be 0 (derived) or positive, got %d", c.HTTP.MaxConnections)
	}
	if c.PushWorkers < 1 {
		return fmt.Errorf("config: PUSH_WORKERS: must be at least 1")
	}
	if c.AckWorkers < 1 {
		return fmt.Errorf("config: ACK_WORKERS: must be at least 1")
	}
	if c.DefaultBatchSize < 1 {
		return fmt.Errorf("config: DEFAULT_BATCH_SIZE: must be at least 1")
	}
	switch c.DefaultSubscriptionMode {
	case "", "all", "new", "new-only":
	default:
		return fmt.Errorf("config: DEFAULT_SUBSCRIPTION_MODE: want all, new or new-only, got %q", c.DefaultSubscriptionMode)
	}
	if c.MaxBatchItems < 1 || c.MaxBatchItems > MaxBatchItemsCeiling {
		return fmt.Errorf("config: QUEEN_MAX_BATCH_ITEMS: want 1 to %d, got %d", MaxBatchItemsCeiling, c.MaxBatchItems)
	}
	if c.EvictionInterval <= 0 {
		return fmt.Errorf("config: EVICTION_INTERVAL: must be positive")
	}
	switch c.PoolMode {
	case "session", "transaction":
	default:
		return fmt.Errorf("config: DATABASE_POOL_MODE: want session or transaction, got %q", c.PoolMode)
	}
	if c.PollRecheck <= 0 {
		return fmt.Errorf("config: POP_WAIT_MAX_INTERVAL_MS: must be positive")
	}
	switch {
	case c.pg.url != "":
		c.DatabaseURL = c.pg.url
	case c.pg.anySet:
		hosts, err := pgHosts(c.pg.host, c.pg.port)
		if err != nil {
			return err
		}
		ssl := "disable"
		if c.pg.ssl {
			ssl = "require"
		}
		query := "sslmode=" + ssl
		if len(hosts) > 1 {
			// Several hosts are a primary and its standbys: only the one that takes writes will do.
			query += "&target_session_attrs=read-write"
		}
		u := url.URL{Scheme: "postgres", User: url.UserPassword(c.pg.user, c.pg.password),
			Host: strings.Join(hosts, ","), Path: "/" + c.pg.db, RawQuery: query}
		c.DatabaseURL = u.String()
	}
	return nil
}

// pgHosts pairs the comma lists of PG_HOST and PG_PORT into host:port entries; one port serves every
// host.
func pgHosts(hostList, portList string) ([]string, error) {
	hosts, ports := strings.Split(hostList, ","), strings.Split(portList, ",")
	if len(ports) != 1 && len(ports) != len(hosts) {
		return nil, fmt.Errorf("config: PG_PORT: %d ports for %d hosts in PG_HOST; give one port, or one per host", len(ports), len(hosts))
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		p := ports[0]
		if len(ports) > 1 {
			p = ports[i]
		}
		port, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("config: PG_PORT: not an integer: %q", p)
		}
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, fmt.Errorf("config: PG_HOST: empty host in %q", hostList)
		}
		out[i] = net.JoinHostPort(h, strconv.Itoa(port))
	}
	return out, nil
}

// MaxBatchItemsCeiling is the largest QUEEN_MAX_BATCH_ITEMS: an entry costs up to about a kilobyte of
// decoded structure and work however small its text, and past this many the memory bound of a
// request (4 times its body plus 64 MB) no longer holds for bodies of tiny entries; test/faults
// TestManySmallItemsMemoryIsBounded measures a broker set to it.
const MaxBatchItemsCeiling = 10_000

// Embedded reports whether no database is configured, so the broker starts its own PostgreSQL.
func (c Config) Embedded() bool { return c.DatabaseURL == "" }

// Addr is the listen address.
func (c Config) Addr() string { return fmt.Sprintf("%s:%d", c.Host, c.Port) }
