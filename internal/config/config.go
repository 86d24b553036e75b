// Package config declares every environment variable the broker reads, once, with its default and
// meaning, and parses them into an immutable Config. Garbage in a variable is an error naming it.
package config

import (
	"fmt"
	"net/url"
	"slices"
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

	PoolSize         int
	AcquireTimeout   time.Duration
	StatementTimeout time.Duration

	DefaultTimeout          time.Duration
	DefaultBatchSize        int
	DefaultSubscriptionMode string
	EvictionInterval        time.Duration
	MaxPollTimeout          time.Duration
	PollRecheck             time.Duration

	MaxBodyBytes    int64
	ShutdownTimeout time.Duration

	LogLevel  string
	LogFormat string
	PprofAddr string

	HTTP       HTTPConfig       // http.go
	Auth       auth.Options     // auth.go: the variables, read straight into what internal/auth takes
	Encryption EncryptionConfig // encryption.go
	Jobs       JobsConfig       // jobs.go
	Durability DurabilityConfig // durability.go
	Dashboard  DashboardConfig  // dashboard.go

	pg pgParts
}

type pgParts struct {
	url                                 string
	host, port, user, password, db, ssl string
	anySet                              bool
}

// Var is one environment variable of the table.
type Var struct {
	Name    string
	Default string
	Doc     string
	Secret  bool
	set     func(c *Config, v string) error
}

func intVar(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		if n < 0 {
			return fmt.Errorf("must not be negative: %d", n)
		}
		*dst(c) = n
		return nil
	}
}

func msVar(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not a number of milliseconds: %q", v)
		}
		if n < 0 {
			return fmt.Errorf("must not be negative: %d", n)
		}
		*dst(c) = time.Duration(n) * time.Millisecond
		return nil
	}
}

func strVar(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func pgVar(dst func(*pgParts) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*dst(&c.pg) = v
		c.pg.anySet = true
		return nil
	}
}

// Vars is the table of every variable, in documentation order. Each part keeps its rows in its own file.
var Vars = slices.Concat(coreVars, httpVars, durabilityVars, encryptionVars, jobsVars, authVars, dashboardVars)

// validators check each part after all variables are read.
var validators = []func(*Config) error{(*Config).validate, (*Config).validateDurability, (*Config).validateEncryption, (*Config).validateJobs, (*Config).validateAuth}

var coreVars = []Var{
	{"HOST", "0.0.0.0", "address the HTTP API listens on", false, strVar(func(c *Config) *string { return &c.Host })},
	{"PORT", "6632", "port the HTTP API listens on", false, intVar(func(c *Config) *int { return &c.Port })},
	{"DATABASE_URL", "", "PostgreSQL URL; alternative to the PG_* set", true, pgVar(func(p *pgParts) *string { return &p.url })},
	{"PG_HOST", "localhost", "PostgreSQL host", false, pgVar(func(p *pgParts) *string { return &p.host })},
	{"PG_PORT", "5432", "PostgreSQL port", false, pgVar(func(p *pgParts) *string { return &p.port })},
	{"PG_USER", "postgres", "PostgreSQL user", false, pgVar(func(p *pgParts) *string { return &p.user })},
	{"PG_PASSWORD", "postgres", "PostgreSQL password", true, pgVar(func(p *pgParts) *string { return &p.password })},
	{"PG_DB", "postgres", "PostgreSQL database", false, pgVar(func(p *pgParts) *string { return &p.db })},
	{"PG_USE_SSL", "false", "connect to PostgreSQL over TLS (exactly `true`)", false, pgVar(func(p *pgParts) *string { return &p.ssl })},
	{"QUEEN_DATA_DIR", "./queen-data", "data directory of the embedded PostgreSQL started when no database is configured", false, strVar(func(c *Config) *string { return &c.DataDir })},
	{"QUEEN_SCHEMA", "queenmq", "PostgreSQL schema holding the broker's tables", false, strVar(func(c *Config) *string { return &c.Schema })},
	{"DB_POOL_SIZE", "20", "maximum PostgreSQL connections of this broker", false, intVar(func(c *Config) *int { return &c.PoolSize })},
	{"DB_CONNECTION_TIMEOUT", "2000", "ms a request waits for a free connection before answering 500 pool", false, msVar(func(c *Config) *time.Duration { return &c.AcquireTimeout })},
	{"DB_STATEMENT_TIMEOUT", "30000", "ms statement timeout of every broker query", false, msVar(func(c *Config) *time.Duration { return &c.StatementTimeout })},
	{"DEFAULT_TIMEOUT", "30000", "ms long-poll timeout of a pop that gives none", false, msVar(func(c *Config) *time.Duration { return &c.DefaultTimeout })},
	{"DEFAULT_BATCH_SIZE", "1", "messages per pop when the request gives no batch", false, intVar(func(c *Config) *int { return &c.DefaultBatchSize })},
	{"DEFAULT_SUBSCRIPTION_MODE", "", "where a new consumer group starts when a pop does not say: all (empty) or new", false, strVar(func(c *Config) *string { return &c.DefaultSubscriptionMode })},
	{"EVICTION_INTERVAL", "60000", "ms between maxWaitTimeSeconds sweeps", false, msVar(func(c *Config) *time.Duration { return &c.EvictionInterval })},
	{"POP_MAX_TIMEOUT_MS", "300000", "longest long-poll timeout honoured", false, msVar(func(c *Config) *time.Duration { return &c.MaxPollTimeout })},
	{"POP_WAIT_MAX_INTERVAL_MS", "1000", "safety re-check of parked long-polls (pushes wake them at once; this catches lease expiry and delays)", false, msVar(func(c *Config) *time.Duration { return &c.PollRecheck })},
	{"QUEEN_MAX_BODY_BYTES", "67108864", "largest request body; larger ones are answered 413 without being read", false, func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("not a positive byte count: %q", v)
		}
		c.MaxBodyBytes = n
		return nil
	}},
	{"SHUTDOWN_TIMEOUT_MS", "10000", "ms graceful shutdown may take", false, msVar(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{"LOG_LEVEL", "info", "debug, info, warn or error", false, strVar(func(c *Config) *string { return &c.LogLevel })},
	{"LOG_FORMAT", "text", "text or json", false, strVar(func(c *Config) *string { return &c.LogFormat })},
	{"PPROF_ADDR", "", "address of a separate net/http/pprof listener for CPU and heap profiles (empty = off); bind it to a private address", false, strVar(func(c *Config) *string { return &c.PprofAddr })},
}

// Load builds the configuration from getenv (os.Getenv in main, a map in tests).
func Load(getenv func(string) string) (Config, error) {
	var c Config
	for _, v := range Vars {
		if v.Default != "" {
			if err := v.set(&c, v.Default); err != nil {
				return Config{}, fmt.Errorf("config: default of %s: %w", v.Name, err)
			}
		}
	}
	c.pg.anySet = false // defaults alone do not configure a database
	for _, v := range Vars {
		if s := getenv(v.Name); s != "" {
			if err := v.set(&c, s); err != nil {
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
	if c.DefaultBatchSize < 1 {
		return fmt.Errorf("config: DEFAULT_BATCH_SIZE: must be at least 1")
	}
	switch c.DefaultSubscriptionMode {
	case "", "all", "new", "new-only":
	default:
		return fmt.Errorf("config: DEFAULT_SUBSCRIPTION_MODE: want all, new or new-only, got %q", c.DefaultSubscriptionMode)
	}
	if c.EvictionInterval <= 0 {
		return fmt.Errorf("config: EVICTION_INTERVAL: must be positive")
	}
	if c.PollRecheck <= 0 {
		return fmt.Errorf("config: POP_WAIT_MAX_INTERVAL_MS: must be positive")
	}
	switch {
	case c.pg.url != "":
		c.DatabaseURL = c.pg.url
	case c.pg.anySet:
		port, err := strconv.Atoi(c.pg.port)
		if err != nil {
			return fmt.Errorf("config: PG_PORT: not an integer: %q", c.pg.port)
		}
		ssl := "disable"
		if c.pg.ssl == "true" {
			ssl = "require"
		}
		u := url.URL{Scheme: "postgres", User: url.UserPassword(c.pg.user, c.pg.password),
			Host: fmt.Sprintf("%s:%d", c.pg.host, port), Path: "/" + c.pg.db, RawQuery: "sslmode=" + ssl}
		c.DatabaseURL = u.String()
	}
	return nil
}

// Embedded reports whether no database is configured, so the broker starts its own PostgreSQL.
func (c Config) Embedded() bool { return c.DatabaseURL == "" }

// Addr is the listen address.
func (c Config) Addr() string { return fmt.Sprintf("%s:%d", c.Host, c.Port) }
