package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/queen-go/queen/internal/setting"
)

// Vars is the table of every variable, in documentation order, bound to a Config of its own (it
// serves the reference and the usage text); Load builds the same table over the Config it fills.
var Vars = varsOf(new(Config))

// varsOf is the table bound to c: one row a variable, grouped by the part of Config it fills; each
// part's file holds its struct and its validation.
func varsOf(c *Config) []Var {
	return []Var{
		// The broker: listener, database, pool, pops, bodies, shutdown, logs.
		{"HOST", "0.0.0.0", "address the HTTP API listens on", false, strVar(&c.Host)},
		{"PORT", "6632", "port the HTTP API listens on", false, intVar(&c.Port)},
		{"DATABASE_URL", "", "PostgreSQL URL; alternative to the PG_* set. Several hosts (postgres://h1:5432,h2:5432/db) name a primary and its standbys: the broker connects to the one taking writes (target_session_attrs=read-write unless the URL says otherwise) and follows a failover by itself (docs/operations.md \"Failover\")", true, c.pg.pgVar(&c.pg.url)},
		{"PG_HOST", "localhost", "PostgreSQL host; a comma list (h1,h2) names a primary and its standbys, as a multi-host DATABASE_URL does", false, c.pg.pgVar(&c.pg.host)},
		{"PG_PORT", "5432", "PostgreSQL port; a comma list gives one port per PG_HOST entry", false, c.pg.pgVar(&c.pg.port)},
		{"PG_USER", "postgres", "PostgreSQL user", false, c.pg.pgVar(&c.pg.user)},
		{"PG_PASSWORD", "postgres", "PostgreSQL password", true, c.pg.pgVar(&c.pg.password)},
		{"PG_DB", "postgres", "PostgreSQL database", false, c.pg.pgVar(&c.pg.db)},
		boolRow("PG_USE_SSL", "false", "connect to PostgreSQL over TLS (sslmode=require)", func(b bool) { c.pg.ssl, c.pg.anySet = b, true }),
		{"DATABASE_POOL_MODE", "session", "session, or transaction when DATABASE_URL is a pooler in transaction-pooling mode (PgBouncer pool_mode=transaction): then the broker sends no session settings at connect, makes them transaction-local, runs no named prepared statements and wraps every statement in a transaction (docs/operations.md \"PgBouncer\")", false, trimVar(&c.PoolMode)},
		{"DATABASE_LISTEN_URL", "", "PostgreSQL URL of the session that LISTENs for the other brokers' wake-ups (empty: DATABASE_URL); with DATABASE_POOL_MODE=transaction a direct URL or a session-mode pool, since LISTEN does not work through transaction pooling: without it the broker does not LISTEN and parked pops learn of other brokers' pushes only at POP_WAIT_MAX_INTERVAL_MS", true, strVar(&c.ListenURL)},
		{"DATABASE_READ_URL", "", "PostgreSQL URL of a streaming standby that serves the read routes (queue and message browsing, traces, status, analytics) while it lags the primary by at most DATABASE_READ_MAX_LAG_MS; otherwise, and for everything else, the primary (docs/operations.md \"Read replica\")", true, strVar(&c.ReadURL)},
		{"DATABASE_READ_MAX_LAG_MS", "5000", "ms a read replica may lag the primary and still serve reads; its lag is measured every second", false, msVar(&c.ReadMaxLag)},
		{"QUEEN_DATA_DIR", "./queen-data", "data directory of the embedded PostgreSQL started when no database is configured", false, strVar(&c.DataDir)},
		{"QUEEN_SCHEMA", "queenmq", "PostgreSQL schema holding the broker's tables", false, strVar(&c.Schema)},
		{"DB_POOL_SIZE", "20", "maximum PostgreSQL connections of this broker (half for pops and acks, half for everything else: docs/architecture.md \"Connections\")", false, intVar(&c.PoolSize)},
		{"PUSH_WORKERS", "4", "push transactions this broker runs at once (pushes that arrive meanwhile are merged into the next ones; capped at half of DB_POOL_SIZE, the general pool they share with the API's other statements and the jobs): a light load fills one worker's transactions before the next worker takes any, so it costs PostgreSQL few large transactions, and a heavy one commits on every worker in parallel (docs/decisions.md \"Push workers\")", false, intVar(&c.PushWorkers)},
		{"ACK_WORKERS", "1", "ack transactions this broker runs at once (acks that arrive meanwhile are merged into the next one; capped at half of DB_POOL_SIZE, the pool of pops and acks): each ack transaction waits for its commit to reach disk, so one worker that merges every waiting ack commits less often for the same acks than two (docs/decisions.md \"One ack worker\")", false, intVar(&c.AckWorkers)},
		{"DB_CONNECTION_TIMEOUT", "2000", "ms a request waits for a connection: then 500 pool when every connection is busy, 503 database unavailable when one could not be opened in time", false, msVar(&c.AcquireTimeout)},
		{"DB_STATEMENT_TIMEOUT", "30000", "ms statement timeout of every broker query", false, msVar(&c.StatementTimeout)},
		{"DEFAULT_TIMEOUT", "30000", "ms long-poll timeout of a pop that gives none", false, msVar(&c.DefaultTimeout)},
		{"DEFAULT_BATCH_SIZE", "1", "messages per pop when the request gives no batch", false, intVar(&c.DefaultBatchSize)},
		{"DEFAULT_SUBSCRIPTION_MODE", "", "where a new consumer group starts when a pop does not say: all (empty) or new", false, strVar(&c.DefaultSubscriptionMode)},
		{"EVICTION_INTERVAL", "60000", "ms between maxWaitTimeSeconds sweeps", false, msVar(&c.EvictionInterval)},
		{"POP_MAX_TIMEOUT_MS", "300000", "longest long-poll timeout honoured", false, msVar(&c.MaxPollTimeout)},
		{"POP_WAIT_MAX_INTERVAL_MS", "30000", "safety re-check of a parked long-poll, jittered ±25 %, armed only when the pop's timeout ends after 1.25 × this (pushes, acks, lease expiries and delays wake it by event; this catches what a crashed broker or a lost NOTIFY could not announce)", false, msVar(&c.PollRecheck)},
		{"QUEEN_MAX_BODY_BYTES", "67108864", "largest request body; larger ones are answered 413 without being read", false, bytesVar(&c.MaxBodyBytes)},
		{"QUEEN_MAX_BATCH_ITEMS", "10000", "most entries one request may carry: the items of a push, the acknowledgments of an ack batch, the operations of a transaction (a push operation counting its items); more are answered 413 `batch of N items exceeds QUEEN_MAX_BATCH_ITEMS (M)` before any is decoded. An entry costs memory whatever its size, so this cap, with QUEEN_MAX_BODY_BYTES, bounds a request's memory (at most 10000, the default: it may only be lowered)", false, intVar(&c.MaxBatchItems)},
		{"SHUTDOWN_TIMEOUT_MS", "10000", "ms graceful shutdown may take", false, msVar(&c.ShutdownTimeout)},
		{"LOG_LEVEL", "info", "debug, info, warn or error", false, strVar(&c.LogLevel)},
		{"LOG_FORMAT", "text", "text or json", false, strVar(&c.LogFormat)},
		{"QUEEN_GC_PERCENT", "200", "the Go collector's GOGC: the heap may grow by this percent of the live heap before a collection (GOGC, when set, wins); QUEEN_MEMORY_LIMIT_BYTES caps what this lets the heap take", false, intVar(&c.GCPercent)},
		{"QUEEN_MEMORY_LIMIT_BYTES", "41943040", "soft limit of the memory the Go runtime holds, plus 64 KiB per open connection (GOMEMLIMIT, when set, wins): past it the collector runs sooner than QUEEN_GC_PERCENT says, at most half the CPU; 0 = no limit", false, func(v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("not a byte count: %q", v)
			}
			c.MemoryLimit = n
			return nil
		}},
		{"PPROF_ADDR", "", "address of a separate net/http/pprof listener for CPU and heap profiles (empty = off); bind it to a private address", false, strVar(&c.PprofAddr)},

		// HTTP connections (http.go).
		{"QUEEN_BODY_BUDGET_BYTES", "67108864", "bytes of large request bodies (1 MiB or more, or of unknown length) handled at once; more wait their turn, bounding memory", false, bytesVar(&c.HTTP.BodyBudget)},
		{"HTTP_READ_HEADER_TIMEOUT_MS", "10000", "ms a client may take to send a request's headers", false, msVar(&c.HTTP.ReadHeaderTimeout)},
		{"HTTP_READ_TIMEOUT_MS", "120000", "ms a client may take to send a whole request, body included (0 = no limit)", false, msVar(&c.HTTP.ReadTimeout)},
		{"MAX_CONNECTIONS", "0", "open client connections of the HTTP API; one more is answered `503 {\"error\":\"too many open connections\",\"code\":\"connection_limit\"}` at once and closed, so that clients go to another broker instead of waiting on one out of file descriptors (0: the process's open-file limit less DB_POOL_SIZE and 128 for the broker's own files)", false, intVar(&c.HTTP.MaxConnections)},
		{"HTTP_IDLE_TIMEOUT_MS", "60000", "ms an idle keep-alive connection stays open", false, msVar(&c.HTTP.IdleTimeout)},
		{"QUEEN_DB_STOP_TIMEOUT_MS", "30000", "ms shutdown waits for the embedded PostgreSQL to stop (after SHUTDOWN_TIMEOUT_MS, whatever clients do); then it is stopped immediately", false, msVar(&c.HTTP.DBStopTimeout)},

		// The disk spool (durability.go).
		{"FILE_BUFFER_DIR", "./queen-spool", "directory of the disk spool that keeps pushes while PostgreSQL is unreachable or push maintenance is on (one per broker)", false, strVar(&c.Durability.SpoolDir)},
		{"FILE_BUFFER_FLUSH_MS", "100", "ms between attempts to replay the spool into PostgreSQL", false, msVar(&c.Durability.FlushInterval)},
		{"FILE_BUFFER_MAX_BATCH", "100", "spooled pushes replayed per database round-trip", false, intVar(&c.Durability.ReplayBatch)},

		// Encryption at rest (encryption.go).
		{"QUEEN_ENCRYPTION_KEY", "", "64 hex characters (AES-256-GCM key) for queues with encryptionEnabled; a malformed value is a startup error", true, strVar(&c.Encryption.keyText)},

		// The background jobs (jobs.go).
		{"METRICS_MAX_QUEUES", "1000", "distinct queues with Prometheus series of their own; later queues share the queue=\"__overflow__\" series", false, intVar(&c.Jobs.MetricsMaxQueues)},
		{"STATS_INTERVAL_MS", "10000", "ms between refreshes of the rolled-up queue statistics (listing counts are at most two intervals old, or ten times a pass's duration when a pass takes longer than a tenth of it)", false, msVar(&c.Jobs.StatsInterval)},
		{"VACUUM_INTERVAL_MS", "2000", "ms between checks of the dead rows of pending_partitions (the lines wildcard pops walk); when it holds at least as many dead rows as live ones, and at least 2000 that pops walk past (20000 otherwise), it is vacuumed then instead of at autovacuum's next round (0: leave it to autovacuum)", false, msVar(&c.Jobs.VacuumInterval)},
		{"ANALYZE_INTERVAL_MS", "2000", "ms between checks of the row counts of the tables pops, acks and pushes read; one that holds at least 1000 rows and four times what its statistics say, while they say fewer than 10000, is analyzed then instead of at autoanalyze's next round, so that no connection keeps a plan built while it looked empty (0: leave it to autovacuum)", false, msVar(&c.Jobs.AnalyzeInterval)},
		{"RETENTION_INTERVAL", "300000", "ms between retention passes (one broker per pass)", false, msVar(&c.Jobs.RetentionInterval)},
		{"RETENTION_BATCH_SIZE", "1000", "messages deleted per partition per retention statement", false, intVar(&c.Jobs.RetentionBatchSize)},
		{"PARTITION_CLEANUP_DAYS", "30", "days an empty partition (other than Default) may stay idle before it is deleted", false, intVar(&c.Jobs.PartitionCleanupDays)},
		{"METRICS_RETENTION_DAYS", "90", "days of operation and retention history kept", false, intVar(&c.Jobs.MetricsRetentionDays)},

		// Authentication (auth.go): read straight into what internal/auth takes.
		boolRow("JWT_ENABLED", "false", "require a JWT on every non-public route", boolVar(&c.Auth.Enabled)),
		{"JWT_ALGORITHM", "HS256", "HS256, RS256, EdDSA, or auto (follow the token's alg header)", false, trimVar(&c.Auth.Algorithm)},
		{"JWT_SECRET", "", "HS256 shared secret", true, strVar(&c.Auth.Secret)},
		{"JWT_PUBLIC_KEY", "", "PEM public key (RSA or Ed25519) for RS256/EdDSA; literal \\n sequences are read as newlines", false, strVar(&c.Auth.PublicKey)},
		{"JWT_JWKS_URL", "", "URL of a JWKS for RS256/EdDSA keys, cached by kid", false, trimVar(&c.Auth.JWKSURL)},
		{"JWT_ISSUER", "", "required iss claim (unchecked when empty)", false, trimVar(&c.Auth.Issuer)},
		{"JWT_AUDIENCE", "", "required aud claim (unchecked when empty)", false, trimVar(&c.Auth.Audience)},
		boolRow("JWT_REQUIRE_EXP", "true", "refuse tokens without an exp claim (401 Token has expired: exp claim is required); `false` accepts them", boolVar(&c.Auth.RequireExp)),
		boolRow("METRICS_REQUIRE_AUTH", "true", "with JWT on, /metrics and /metrics/prometheus need a token with read access (they are dropped from JWT_SKIP_PATHS); `false` leaves them to JWT_SKIP_PATHS", boolVar(&c.Auth.MetricsRequireAuth)),
		{"JWT_CLOCK_SKEW", "30", "seconds of leeway on exp, nbf and iat", false, secondsVar(&c.Auth.ClockSkew)},
		{"JWT_SKIP_PATHS", "/health,/metrics/prometheus,/metrics,/", "comma-separated paths that bypass auth: exact match, or prefix match for entries longer than one character ending in /", false, func(v string) error {
			c.Auth.SkipPaths = setting.List(v)
			return nil
		}},
		{"JWT_JWKS_REFRESH_INTERVAL", "3600", "seconds after which the cached JWKS is fetched again", false, secondsVar(&c.Auth.JWKSRefreshInterval)},
		{"JWT_JWKS_TIMEOUT_MS", "5000", "ms timeout of one JWKS fetch", false, msVar(&c.Auth.JWKSTimeout)},
		{"JWT_ROLES_CLAIM", "role", "claim holding one role as a string", false, trimVar(&c.Auth.RolesClaim)},
		{"JWT_ROLES_ARRAY_CLAIM", "roles", "claim holding an array of roles", false, trimVar(&c.Auth.RolesArrayClaim)},
		{"JWT_ROLE_ADMIN", "admin", "role name that passes every level", false, trimVar(&c.Auth.RoleAdmin)},
		{"JWT_ROLE_READ_WRITE", "read-write", "role name that passes produce, consume and read", false, trimVar(&c.Auth.RoleReadWrite)},
		{"JWT_ROLE_READ_ONLY", "read-only", "role name that passes read", false, trimVar(&c.Auth.RoleReadOnly)},
		{"JWT_ROLE_WRITE_ONLY", "write-only", "role name that passes produce (push) only", false, trimVar(&c.Auth.RoleWriteOnly)},

		// The dashboard (dashboard.go).
		{"WEBAPP_ROOT", "", "directory served as the dashboard instead of the copy embedded in the binary (development)", false, strVar(&c.Dashboard.WebappRoot)},
	}
}

// validators check each part after all variables are read.
var validators = []func(*Config) error{(*Config).validate, (*Config).validateDurability, (*Config).validateEncryption, (*Config).validateJobs, (*Config).validateAuth}

// Var is one environment variable of the table.
type Var struct {
	Name    string
	Default string
	Doc     string
	Secret  bool
	set     func(v string) error // parses v into the Config the table was built over (varsOf)
}

// boolRow is the row of a switch, read by setting as every binary reads its switches; dst
// receives the value. A switch's default is true or false, by which the tests find every switch of
// the table.
func boolRow(name, def, doc string, dst func(bool)) Var {
	return Var{Name: name, Default: def, Doc: doc + " (" + boolSpellings + ")", set: func(v string) error {
		b, err := setting.Bool(v)
		if err != nil {
			return err
		}
		dst(b)
		return nil
	}}
}

// boolSpellings is how the reference words what a switch accepts.
const boolSpellings = "1/0, true/false, yes/no, on/off, any case; anything else stops the broker"

// The setters: each parses a variable's text into the field it is bound to.

func strVar(dst *string) func(string) error {
	return func(v string) error { *dst = v; return nil }
}

// trimVar is strVar without surrounding white space.
func trimVar(dst *string) func(string) error {
	return func(v string) error { *dst = strings.TrimSpace(v); return nil }
}

func intVar(dst *int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		if n < 0 {
			return fmt.Errorf("must not be negative: %d", n)
		}
		*dst = n
		return nil
	}
}

func msVar(dst *time.Duration) func(string) error {
	return durationVar(dst, time.Millisecond, "milliseconds")
}

func secondsVar(dst *time.Duration) func(string) error {
	return durationVar(dst, time.Second, "seconds")
}

// durationVar reads a whole, non-negative number of units.
func durationVar(dst *time.Duration, unit time.Duration, units string) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not a number of %s: %q", units, v)
		}
		if n < 0 {
			return fmt.Errorf("must not be negative: %d", n)
		}
		*dst = time.Duration(n) * unit
		return nil
	}
}

// bytesVar reads a positive byte count.
func bytesVar(dst *int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("not a positive byte count: %q", v)
		}
		*dst = n
		return nil
	}
}

// boolVar is where a switch's value goes (boolRow).
func boolVar(dst *bool) func(bool) {
	return func(b bool) { *dst = b }
}

// pgVar sets one PG_* part; any of them set configures a database.
func (p *pgParts) pgVar(dst *string) func(string) error {
	return func(v string) error {
		*dst = v
		p.anySet = true
		return nil
	}
}
