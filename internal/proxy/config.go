package proxy

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Config is queen-proxy's configuration, read once from the environment by [LoadConfig].
type Config struct {
	Addr            string        // QUEEN_PROXY_HOST:QUEEN_PROXY_PORT
	DatabaseURL     string        // QUEEN_PROXY_DATABASE_URL
	Schema          string        // QUEEN_PROXY_SCHEMA
	AdminToken      string        // QUEEN_PROXY_ADMIN_TOKEN; empty disables the admin API
	JWTSecret       []byte        // QUEEN_PROXY_JWT_SECRET; the broker's JWT_SECRET
	JWTTTL          time.Duration // QUEEN_PROXY_JWT_TTL_SECONDS
	Shadow          bool          // QUEEN_PROXY_RATE_MODE=shadow
	MaxBodyBytes    int64         // QUEEN_PROXY_MAX_BODY_BYTES
	UpstreamTimeout time.Duration // QUEEN_PROXY_UPSTREAM_TIMEOUT_MS
	LogLevel        string        // QUEEN_PROXY_LOG_LEVEL

	ReadHeaderTimeout  time.Duration // QUEEN_PROXY_READ_HEADER_TIMEOUT_MS
	ReadTimeout        time.Duration // QUEEN_PROXY_READ_TIMEOUT_MS
	WriteTimeout       time.Duration // QUEEN_PROXY_WRITE_TIMEOUT_MS
	IdleTimeout        time.Duration // QUEEN_PROXY_IDLE_TIMEOUT_MS
	MaxPollWait        time.Duration // QUEEN_PROXY_MAX_POLL_MS
	MaxConns           int           // QUEEN_PROXY_MAX_CONNS
	MaxConnsPerCluster int           // QUEEN_PROXY_MAX_CONNS_PER_CLUSTER
	CacheTTL           time.Duration // QUEEN_PROXY_CACHE_MS
	QuotaBlock         int64         // QUEEN_PROXY_QUOTA_BLOCK
	UsageFlush         time.Duration // QUEEN_PROXY_USAGE_FLUSH_MS
	GCPercent          int64         // QUEEN_PROXY_GC_PERCENT
	PprofAddr          string        // QUEEN_PROXY_PPROF_ADDR; empty: none
}

// EnvVar documents one variable of [LoadConfig].
type EnvVar struct{ Name, Default, Doc string }

// EnvVars is the proxy's environment, in one table (docs/proxy.md lists the same).
var EnvVars = []EnvVar{
	{"QUEEN_PROXY_HOST", "0.0.0.0", "listen address"},
	{"QUEEN_PROXY_PORT", "6634", "listen port"},
	{"QUEEN_PROXY_DATABASE_URL", "", "PostgreSQL URL for the proxy's own state (required)"},
	{"QUEEN_PROXY_SCHEMA", "queen_proxy", "schema of the proxy's tables"},
	{"QUEEN_PROXY_ADMIN_TOKEN", "", "bearer token of /_proxy/admin/*; empty disables the admin API (secret)"},
	{"QUEEN_PROXY_JWT_SECRET", "", "HS256 secret shared with the brokers' JWT_SECRET (required for serve; secret)"},
	{"QUEEN_PROXY_JWT_TTL_SECONDS", "60", "lifetime of the JWT minted per forwarded request"},
	{"QUEEN_PROXY_RATE_MODE", "enforce", "enforce: answer 429; shadow: log and count denials but forward"},
	{"QUEEN_PROXY_MAX_BODY_BYTES", "16777216", "request body cap per instance (413 request body exceeds cap)"},
	{"QUEEN_PROXY_UPSTREAM_TIMEOUT_MS", "30000", "broker answer deadline, extended by a long-poll's timeout"},
	{"QUEEN_PROXY_LOG_LEVEL", "info", "debug, info, warn, error"},
	{"QUEEN_PROXY_READ_HEADER_TIMEOUT_MS", "10000", "ms a client may take to send a request's headers"},
	{"QUEEN_PROXY_READ_TIMEOUT_MS", "60000", "ms a client may take to send a whole request, body included"},
	{"QUEEN_PROXY_WRITE_TIMEOUT_MS", "45000", "ms to answer a request once read, above QUEEN_PROXY_UPSTREAM_TIMEOUT_MS; a waiting pop adds its own timeout"},
	{"QUEEN_PROXY_IDLE_TIMEOUT_MS", "60000", "ms an idle keep-alive connection stays open"},
	{"QUEEN_PROXY_MAX_POLL_MS", "300000", "longest waiting-pop timeout the proxy extends its deadlines by (the brokers' POP_MAX_TIMEOUT_MS)"},
	{"QUEEN_PROXY_MAX_CONNS", "10000", "open client connections per instance; beyond it a connection is answered 503 connection_limit and closed"},
	{"QUEEN_PROXY_MAX_CONNS_PER_CLUSTER", "1000", "open client connections per cluster per instance (503 connection_limit)"},
	{"QUEEN_PROXY_CACHE_MS", "2000", "ms a resolved credential and its cluster (state, plan, storage used) are reused; changes made through another instance or the CLI take effect within it (this instance's admin API clears it); at most half the JWT TTL; 0 reads the database on every request"},
	{"QUEEN_PROXY_QUOTA_BLOCK", "1000", "messages of a monthly quota reserved ahead per cluster, at most an eighth of what is left; unspent blocks are given back after an idle flush interval and at shutdown; 0 reserves each push's own"},
	{"QUEEN_PROXY_PPROF_ADDR", "", "address of a separate net/http/pprof listener (e.g. 127.0.0.1:6064); empty: none"},
	{"QUEEN_PROXY_USAGE_FLUSH_MS", "1000", "ms between writes of the accepted messages and bytes (a crash loses at most this much counting); 0 writes each push's at once"},
	{"QUEEN_PROXY_GC_PERCENT", "400", "the Go collector's GOGC for the proxy (GOGC, when set, wins); 0 leaves Go's default"},
}

// LoadConfig reads the environment through getenv. Garbage in a numeric variable is an error naming it.
func LoadConfig(getenv func(string) string) (Config, error) {
	get := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		for _, e := range EnvVars {
			if e.Name == name {
				return e.Default
			}
		}
		return ""
	}
	num := func(name string) (int64, error) {
		n, err := strconv.ParseInt(get(name), 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("proxy: %s must be a positive integer, got %q", name, get(name))
		}
		return n, nil
	}
	c := Config{
		Addr:        get("QUEEN_PROXY_HOST") + ":" + get("QUEEN_PROXY_PORT"),
		DatabaseURL: get("QUEEN_PROXY_DATABASE_URL"),
		Schema:      get("QUEEN_PROXY_SCHEMA"),
		AdminToken:  get("QUEEN_PROXY_ADMIN_TOKEN"),
		JWTSecret:   []byte(get("QUEEN_PROXY_JWT_SECRET")),
		LogLevel:    get("QUEEN_PROXY_LOG_LEVEL"),
		PprofAddr:   get("QUEEN_PROXY_PPROF_ADDR"),
	}
	if _, err := num("QUEEN_PROXY_PORT"); err != nil {
		return Config{}, err
	}
	ttl, err := num("QUEEN_PROXY_JWT_TTL_SECONDS")
	if err != nil {
		return Config{}, err
	}
	c.JWTTTL = time.Duration(ttl) * time.Second
	if c.MaxBodyBytes, err = num("QUEEN_PROXY_MAX_BODY_BYTES"); err != nil {
		return Config{}, err
	}
	ms, err := num("QUEEN_PROXY_UPSTREAM_TIMEOUT_MS")
	if err != nil {
		return Config{}, err
	}
	c.UpstreamTimeout = time.Duration(ms) * time.Millisecond
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{
		{"QUEEN_PROXY_READ_HEADER_TIMEOUT_MS", &c.ReadHeaderTimeout}, {"QUEEN_PROXY_READ_TIMEOUT_MS", &c.ReadTimeout},
		{"QUEEN_PROXY_WRITE_TIMEOUT_MS", &c.WriteTimeout}, {"QUEEN_PROXY_IDLE_TIMEOUT_MS", &c.IdleTimeout},
		{"QUEEN_PROXY_MAX_POLL_MS", &c.MaxPollWait},
	} {
		ms, err := num(d.name)
		if err != nil {
			return Config{}, err
		}
		*d.to = time.Duration(ms) * time.Millisecond
	}
	if c.WriteTimeout <= c.UpstreamTimeout {
		// A slow broker must meet the proxy's 504 before the connection's write deadline cuts it off.
		return Config{}, fmt.Errorf("proxy: QUEEN_PROXY_WRITE_TIMEOUT_MS (%d) must exceed QUEEN_PROXY_UPSTREAM_TIMEOUT_MS (%d)",
			c.WriteTimeout.Milliseconds(), c.UpstreamTimeout.Milliseconds())
	}
	for _, n := range []struct {
		name string
		to   *int
	}{{"QUEEN_PROXY_MAX_CONNS", &c.MaxConns}, {"QUEEN_PROXY_MAX_CONNS_PER_CLUSTER", &c.MaxConnsPerCluster}} {
		v, err := num(n.name)
		if err != nil {
			return Config{}, err
		}
		*n.to = int(min(v, int64(math.MaxInt32)))
	}
	for _, n := range []struct {
		name string
		to   *int64
	}{{"QUEEN_PROXY_CACHE_MS", (*int64)(&c.CacheTTL)}, {"QUEEN_PROXY_QUOTA_BLOCK", &c.QuotaBlock},
		{"QUEEN_PROXY_USAGE_FLUSH_MS", (*int64)(&c.UsageFlush)}, {"QUEEN_PROXY_GC_PERCENT", &c.GCPercent}} {
		v, err := strconv.ParseInt(get(n.name), 10, 64)
		if err != nil || v < 0 {
			return Config{}, fmt.Errorf("proxy: %s must be a non-negative integer, got %q", n.name, get(n.name))
		}
		*n.to = v
	}
	c.CacheTTL *= time.Millisecond
	c.UsageFlush *= time.Millisecond
	switch m := get("QUEEN_PROXY_RATE_MODE"); m {
	case "enforce":
	case "shadow":
		c.Shadow = true
	default:
		return Config{}, fmt.Errorf("proxy: QUEEN_PROXY_RATE_MODE must be enforce or shadow, got %q", m)
	}
	if c.DatabaseURL == "" {
		return Config{}, fmt.Errorf("proxy: QUEEN_PROXY_DATABASE_URL is required")
	}
	return c, nil
}
