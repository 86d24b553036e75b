// Package broker is the composition root: it builds the store, engine and HTTP transport from a
// Config, starts an embedded PostgreSQL when no database is configured, and runs them until the
// context ends. cmd/queen and the integration tests start the very same assembly.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/config"
	"github.com/queen-go/queen/internal/connlimit"
	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/httpapi"
	"github.com/queen-go/queen/internal/httpguard"
	"github.com/queen-go/queen/internal/httpx"
	"github.com/queen-go/queen/internal/maintenance"
	"github.com/queen-go/queen/internal/metrics"
	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/pgcluster"
	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/streams"
	"github.com/queen-go/queen/internal/version"
	"github.com/queen-go/queen/internal/views"
	"github.com/queen-go/queen/internal/webui"
)

// Broker is a running broker.
type Broker struct {
	cfg      config.Config
	log      *slog.Logger
	cluster  *pgcluster.Cluster
	stopped  chan struct{} // closed by release: ends awaitDatabase
	stopOnce sync.Once
	dirLock  *os.File // exclusive lock on the embedded data directory (datadir.go)
	st       *store.Store
	spool    *spool.Spool
	eng      *engine.Engine
	services []service // read replica, notify hub, stats, retention, eviction, samples; stopped, in reverse, before the engine
	srv      *http.Server
	conns    *connlimit.Listener // srv's listener: caps and counts its open connections
	ln       net.Listener
	served   chan error
}

// Options are what a broker takes besides its configuration: hooks for tests, zero in production.
type Options struct {
	// Clock replaces the database clock in the queue's time decisions (store.Options.Clock), and the
	// retention pass's clock, so that tests make leases expire and delays pass without waiting. nil:
	// the database clock (retention: this process's clock).
	Clock func() time.Time
}

// Start brings the broker up and serves HTTP in the background. ln may be nil: then it listens on
// cfg.Addr().
func Start(ctx context.Context, cfg config.Config, log *slog.Logger, ln net.Listener) (*Broker, error) {
	return StartWith(ctx, cfg, log, ln, Options{})
}

// StartWith is Start with options.
func StartWith(ctx context.Context, cfg config.Config, log *slog.Logger, ln net.Listener, opt Options) (b *Broker, err error) {
	b = &Broker{cfg: cfg, log: log, served: make(chan error, 1), stopped: make(chan struct{})}
	started := b // the error returns below set b to nil; release what was built
	defer func() {
		if err != nil {
			started.release(context.WithoutCancel(ctx))
		}
	}()
	var authz httpapi.Authorizer // nil: JWT off, every route open
	if cfg.Auth.Enabled {
		a, err := auth.New(ctx, cfg.Auth, log)
		if err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		authz = a
		log.InfoContext(ctx, "jwt authentication enabled", slog.String("algorithm", cfg.Auth.Algorithm))
	}
	dbURL := cfg.DatabaseURL
	if cfg.Embedded() {
		// Say why a database is being started: in a container, a forgotten DATABASE_URL otherwise
		// shows up as a permission or missing-binary error about a directory nobody configured.
		noDB := "broker: no database configured (DATABASE_URL or PG_*), and the embedded PostgreSQL"
		dir, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("%s: data dir: %w", noDB, err)
		}
		if b.dirLock, err = lockDataDir(dir); err != nil {
			return nil, fmt.Errorf("%s failed: %w", noDB, err)
		}
		log.InfoContext(ctx, "no database configured: starting embedded PostgreSQL", slog.String("data_dir", dir))
		b.cluster, err = pgcluster.Start(ctx, pgcluster.Options{DataDir: dir, Durable: true, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("%s failed: %w", noDB, err)
		}
		dbURL = b.cluster.URL("postgres")
		log.InfoContext(ctx, "embedded PostgreSQL running", slog.Int("port", b.cluster.Port()))
	}
	b.st, err = store.Open(ctx, store.Options{
		URL: dbURL, Schema: cfg.Schema, PoolSize: int32(cfg.PoolSize),
		AcquireTimeout: cfg.AcquireTimeout, StatementTimeout: cfg.StatementTimeout, DeferMigrate: true,
		PoolMode: cfg.PoolMode, ListenURL: cfg.ListenURL, Clock: opt.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if !b.st.Listens() {
		log.WarnContext(ctx, "DATABASE_POOL_MODE=transaction without DATABASE_LISTEN_URL: no LISTEN, so pops parked here learn of other brokers' pushes only at their re-check (POP_WAIT_MAX_INTERVAL_MS); set DATABASE_LISTEN_URL to a direct or session-mode URL",
			slog.Duration("recheck", cfg.PollRecheck))
	}
	unmigrated, err := b.migrateOrWait(ctx)
	if err != nil {
		return nil, err
	}
	b.spool, err = spool.Open(cfg.Durability.SpoolDir, spool.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("broker: spool: %w", err)
	}
	if n := b.spool.Pending(); n > 0 {
		log.InfoContext(ctx, "spool holds pushes from before the restart: replaying", slog.Int64("pending", n))
	}
	var replica *store.Replica
	if cfg.ReadURL != "" {
		replica, err = store.OpenReplica(ctx, b.st, store.Options{URL: cfg.ReadURL, Schema: cfg.Schema, PoolSize: int32(cfg.PoolSize),
			AcquireTimeout: cfg.AcquireTimeout, StatementTimeout: cfg.StatementTimeout, PoolMode: cfg.PoolMode, Clock: opt.Clock}, cfg.ReadMaxLag, log)
		if err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		b.services = append(b.services, replica) // stopped (and closed) by release even if Start fails below
	}
	reg := prometheus.NewRegistry()
	mx := metrics.New(reg, metrics.Sources{
		Pool:        b.st.PoolStats,
		Buffers:     func() (int64, int64) { p, f, _ := b.eng.SpoolStats(); return p, f },
		Maintenance: func() (bool, bool) { return b.eng.Modes().Flags(context.WithoutCancel(ctx)) },
		Spool:       func() (int64, bool) { h := b.eng.SpoolHealth(); return h.DeadSpooled, h.Stalled },
		Connections: func() (int64, int64, int64) {
			if b.conns == nil { // a scrape before the listener is up
				return 0, 0, 0
			}
			return b.conns.Open(), b.conns.Max(), b.conns.Refused()
		},
		ReadReplica: replicaSource(replica),
	})
	mx.LimitQueues(cfg.Jobs.MetricsMaxQueues)
	// A broker without the key could neither seal new payloads of an encrypted queue nor open
	// stored ones: refuse to start.
	if !unmigrated {
		if err := b.checkEncryptionKey(ctx); err != nil {
			return nil, err
		}
	}
	hub := notify.New(b.st, log)
	// Each push batch holds a connection of the general pool while it runs, each ack batch one of the
	// hot pool (shared with the pops); each pool is half of DB_POOL_SIZE. More batches at once than
	// connections would only wait for one.
	half := max(cfg.PoolSize/2, 1)
	b.eng = engine.New(b.st, log, engine.Options{Hub: hub,
		PushWorkers: min(cfg.PushWorkers, half), AckWorkers: min(cfg.AckWorkers, half),
		RecheckInterval: cfg.PollRecheck, MaxPollTimeout: cfg.MaxPollTimeout, OperationTimeout: cfg.StatementTimeout,
		DefaultSubscriptionMode: cfg.DefaultSubscriptionMode, Spool: b.spool,
		SpoolReplayBatch: cfg.Durability.ReplayBatch,
		Key:              cfg.Encryption.Key, Observer: mx,
		DeadSpoolPath: filepath.Join(cfg.Durability.SpoolDir, engine.DeadSpoolFile),
	})
	if unmigrated {
		b.eng.HoldUntilMigrated()
	}
	b.eng.Start(ctx)
	if cfg.PprofAddr != "" {
		if err = httpx.ServePprof(ctx, cfg.PprofAddr, log); err != nil {
			return nil, err
		}
	}
	// One log of PostgreSQL outages for every job: an outage is one warning, not one per failed pass.
	outages := maintenance.NewOutageLog(log)
	jobs := []*maintenance.Loop{
		maintenance.NewSpoolReplay(b.eng, log, cfg.Durability.FlushInterval),
		maintenance.NewStats(b.st, b.eng, log, maintenance.StatsOptions{Interval: cfg.Jobs.StatsInterval, OnSnapshot: mx.SetStats}),
		maintenance.NewRetention(b.st, log, maintenance.RetentionOptions{Interval: cfg.Jobs.RetentionInterval, BatchSize: cfg.Jobs.RetentionBatchSize,
			PartitionCleanupDays: cfg.Jobs.PartitionCleanupDays, MetricsRetentionDays: cfg.Jobs.MetricsRetentionDays, NowFunc: opt.Clock}),
		maintenance.NewEviction(b.st, log, cfg.EvictionInterval),
		maintenance.NewSamples(b.st, b.eng, log, maintenance.SampleOptions{Interval: cfg.Jobs.StatsInterval, Port: listenPort(ln, cfg.Port),
			KeepDays: cfg.Jobs.MetricsRetentionDays})}
	if cfg.Jobs.VacuumInterval > 0 {
		jobs = append(jobs, maintenance.NewVacuum(b.st, log, cfg.Jobs.VacuumInterval))
	}
	if cfg.Jobs.AnalyzeInterval > 0 {
		jobs = append(jobs, maintenance.NewAnalyze(b.st, log, cfg.Jobs.AnalyzeInterval))
	}
	b.services = append(b.services, hub)
	for _, j := range jobs {
		b.services = append(b.services, j.ReportOutages(outages))
	}
	for _, sv := range b.services {
		if err = sv.Start(ctx); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	dash, err := webui.Handler(cfg.Dashboard.WebappRoot)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	api := httpapi.New(b.eng, views.New(b.st, replica, b.spool, b.eng), streams.New(b.st, b.eng), log, httpapi.Options{Auth: authz, Metrics: mx, Gatherer: reg, Dashboard: dash,
		MaxBodyBytes: cfg.MaxBodyBytes, MaxBatchItems: cfg.MaxBatchItems, DefaultTimeout: cfg.DefaultTimeout,
		DefaultBatchSize: cfg.DefaultBatchSize, Version: version.Release, MetricsAccess: metricsAccess(cfg), BodyBudget: cfg.HTTP.BodyBudget,
	})
	if ln == nil {
		ln, err = net.Listen("tcp", cfg.Addr())
		if err != nil {
			return nil, fmt.Errorf("broker: listen: %w", err)
		}
	}
	b.ln = ln
	b.srv = &http.Server{Handler: api, ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout, ReadTimeout: cfg.HTTP.ReadTimeout,
		IdleTimeout: cfg.HTTP.IdleTimeout,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	// A request with both Content-Length and Transfer-Encoding is refused and its connection closed:
	// net/http would serve a request smuggled behind it (RFC 9112 §6.1, §6.3).
	b.conns = connlimit.New(httpguard.Install(b.srv, ln), connectionCap(cfg.HTTP.MaxConnections, cfg.PoolSize), nil)
	go func() { b.served <- b.srv.Serve(b.conns) }()
	if unmigrated {
		go b.awaitDatabase(ctx)
	}
	log.InfoContext(ctx, "queen broker listening", slog.String("addr", ln.Addr().String()), slog.String("schema", cfg.Schema))
	return b, nil
}

// listenPort is the port the broker serves on: the given listener's (tests pass one on port 0), else PORT.
func listenPort(ln net.Listener, port int) int {
	if ln != nil {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			return a.Port
		}
	}
	return port
}

// metricsAccess puts the metrics routes behind read access when JWT is on and METRICS_REQUIRE_AUTH is.
func metricsAccess(cfg config.Config) auth.Access {
	if cfg.Auth.Enabled && cfg.Auth.MetricsRequireAuth {
		return auth.Read
	}
	return ""
}

// Parked reports how many long-poll pops are waiting for messages.
func (b *Broker) Parked() int { return b.eng.Parked() }

// SpoolPending reports how many pushes the disk spool holds for replay.
func (b *Broker) SpoolPending() int64 {
	p, _, _ := b.eng.SpoolStats()
	return p
}

// Addr is the address the broker serves on.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// Shutdown stops gracefully: parked long-polls are answered empty, in-flight requests finish, then the
// engine, the pool and any embedded PostgreSQL stop. It gives up after cfg.ShutdownTimeout.
func (b *Broker) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.ShutdownTimeout)
	defer cancel()
	b.eng.Drain()
	err := b.srv.Shutdown(ctx)
	if err != nil {
		// Clients still connected past the deadline (a slow body, a stuck reader) are cut off: they
		// must not keep the broker, or its database, alive.
		_ = b.srv.Close()
	}
	b.release(context.WithoutCancel(ctx))
	return err
}

// service is the lifecycle every background job of the broker has: Start once, Stop safe at any time.
type service interface {
	Start(ctx context.Context) error
	Stop()
}

func (b *Broker) release(ctx context.Context) {
	b.stopOnce.Do(func() { close(b.stopped) })
	for _, sv := range slices.Backward(b.services) {
		sv.Stop()
	}
	if b.eng != nil {
		b.eng.Stop()
	}
	if b.st != nil {
		b.st.Close()
	}
	if b.spool != nil {
		if n := b.spool.Pending(); n > 0 {
			// They are not lost: the next broker started on this directory replays them.
			dir, err := filepath.Abs(b.cfg.Durability.SpoolDir)
			if err != nil {
				dir = b.cfg.Durability.SpoolDir
			}
			b.log.WarnContext(ctx, "pushes remain in the spool, replayed at the next start on this directory",
				slog.Int64("pushes", n), slog.String("dir", dir))
		}
		if err := b.spool.Close(); err != nil {
			b.log.WarnContext(ctx, "close spool", slog.Any("error", err))
		}
	}
	if b.cluster != nil {
		// Its own deadline: whatever the shutdown before it used up, the database gets this long.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.HTTP.DBStopTimeout)
		if err := b.cluster.Stop(sctx); err != nil {
			b.log.WarnContext(ctx, "stop embedded PostgreSQL", slog.Any("error", err))
			if err := b.cluster.Kill(); err != nil {
				b.log.ErrorContext(ctx, "embedded PostgreSQL may still run", slog.Any("error", err))
			}
		}
		cancel()
	}
	if b.dirLock != nil {
		_ = b.dirLock.Close() // releases the flock
	}
}

// Run starts the broker and serves until ctx ends, then shuts down gracefully.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	// The collector settings are the process's, so they are set here and not by Start, which tests run
	// several times in one process. An operator who set the runtime's own GOGC or GOMEMLIMIT meant it:
	// the runtime has applied it already, and it is left alone.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(cfg.GCPercent)
	}
	_, ownLimit := os.LookupEnv("GOMEMLIMIT")
	ownLimit = !ownLimit && cfg.MemoryLimit > 0
	if ownLimit {
		debug.SetMemoryLimit(cfg.MemoryLimit)
	}
	b, err := Start(ctx, cfg, log, nil)
	if err != nil {
		return err
	}
	if ownLimit {
		go followConnections(ctx, time.Second, cfg.MemoryLimit, b.conns.Open, setMemoryLimit)
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		return b.Shutdown(ctx)
	case err := <-b.served:
		b.release(context.WithoutCancel(ctx))
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("broker: serve: %w", err)
	}
}

// replicaSource is the metrics' view of the read replica (its lag NaN while none is measured: it does
// not answer, is no standby, or was not probed yet); nil when there is none.
func replicaSource(r *store.Replica) func() (float64, bool) {
	if r == nil {
		return nil
	}
	return func() (float64, bool) {
		st := r.State()
		if !st.LagMeasured() {
			return math.NaN(), false
		}
		return st.Lag.Seconds(), st.Status == store.ReplicaOK
	}
}
