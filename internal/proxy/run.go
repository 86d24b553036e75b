package proxy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queen-go/queen/internal/httpx"
	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/setting"
)

// Run opens the proxy's store (migrating it), serves on cfg.Addr until ctx ends, then shuts down.
func Run(ctx context.Context, cfg Config, log *slog.Logger, reg *prometheus.Registry) error {
	if _, set := os.LookupEnv("GOGC"); !set && cfg.GCPercent > 0 {
		debug.SetGCPercent(int(cfg.GCPercent))
	}
	st, err := proxystore.Open(ctx, cfg.DatabaseURL, cfg.Schema)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := NewServer(Options{Store: st, Logger: log, Registry: reg, JWTSecret: cfg.JWTSecret,
		JWTTTL: cfg.JWTTTL, Shadow: cfg.Shadow, MaxBodyBytes: cfg.MaxBodyBytes,
		UpstreamTimeout: cfg.UpstreamTimeout, AdminToken: cfg.AdminToken,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
		IdleTimeout: cfg.IdleTimeout, MaxPollWait: cfg.MaxPollWait, MaxConns: cfg.MaxConns,
		MaxConnsPerCluster: cfg.MaxConnsPerCluster, CacheTTL: cfg.CacheTTL, QuotaBlock: cfg.QuotaBlock,
		UsageFlush: cfg.UsageFlush})
	if err != nil {
		return err
	}
	if cfg.PprofAddr != "" {
		if err := httpx.ServePprof(ctx, cfg.PprofAddr, log); err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("proxy: listen %s: %w", cfg.Addr, err)
	}
	mode := "enforce"
	if cfg.Shadow {
		mode = "shadow"
	}
	log.InfoContext(ctx, "queen-proxy listening", slog.String("addr", ln.Addr().String()), slog.String("rate_mode", mode))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("proxy: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("proxy: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Usage is the command-line synopsis of queen-proxy.
const Usage = `usage:
  queen-proxy serve
  queen-proxy plan create --name NAME [--max-payload-bytes N] [--max-batch-items N] [--request-rate R]
        [--request-burst B] [--message-rate R] [--message-burst B] [--parked-slots N] [--monthly-messages N]
        [--storage-bytes N] [--max-queues N] [--max-partitions N] [--max-retention-seconds N]
        [--streams] [--traces] [--operator]
  queen-proxy cluster create --name NAME --host HOST[,HOST...] --upstream URL --plan PLAN
  queen-proxy key create --cluster NAME --roles ROLE[,ROLE...] [--name LABEL]
  queen-proxy key revoke --id KEY_ID
  queen-proxy version              (also --version: release, commit and Go version)

configuration comes from the environment (QUEEN_PROXY_*; see docs/proxy.md)
`

// ErrUsage marks a command-line mistake (exit code 2).
var ErrUsage = errors.New("usage")

// Command runs one management sub-command (everything but serve) against the proxy's database and writes
// its result to stdout.
func Command(ctx context.Context, cfg Config, args []string, stdout io.Writer) error {
	if len(args) < 2 {
		return ErrUsage
	}
	fs := flag.NewFlagSet(args[0]+" "+args[1], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var run func(st *proxystore.Store) error
	switch args[0] + " " + args[1] {
	case "plan create":
		var p proxystore.Plan
		fs.StringVar(&p.Name, "name", "", "")
		fs.Int64Var(&p.MaxPayloadBytes, "max-payload-bytes", 1<<20, "")
		fs.IntVar(&p.MaxBatchItems, "max-batch-items", 10000, "")
		fs.Float64Var(&p.RequestRate, "request-rate", 0, "")
		fs.Float64Var(&p.RequestBurst, "request-burst", 0, "")
		fs.Float64Var(&p.MessageRate, "message-rate", 0, "")
		fs.Float64Var(&p.MessageBurst, "message-burst", 0, "")
		fs.IntVar(&p.ParkedSlots, "parked-slots", 0, "")
		fs.Int64Var(&p.MonthlyMessageQuota, "monthly-messages", 0, "")
		fs.Int64Var(&p.StorageQuotaBytes, "storage-bytes", 0, "")
		fs.IntVar(&p.MaxQueues, "max-queues", 0, "")
		fs.IntVar(&p.MaxPartitionsPerQueue, "max-partitions", 0, "")
		fs.Int64Var(&p.MaxRetentionSeconds, "max-retention-seconds", 0, "")
		fs.BoolVar(&p.FeatureStreams, "streams", false, "")
		fs.BoolVar(&p.FeatureTraces, "traces", false, "")
		fs.BoolVar(&p.FeatureOperator, "operator", false, "")
		run = func(st *proxystore.Store) error {
			id, err := CreatePlan(ctx, st, p)
			if err == nil {
				_, err = fmt.Fprintf(stdout, "plan %s created (id %d)\n", p.Name, id)
			}
			return err
		}
	case "cluster create":
		var p proxystore.CreateClusterParams
		var hosts string
		fs.StringVar(&p.Name, "name", "", "")
		fs.StringVar(&hosts, "host", "", "")
		fs.StringVar(&p.UpstreamURL, "upstream", "", "")
		fs.StringVar(&p.Plan, "plan", "", "")
		fs.StringVar(&p.State, "state", proxystore.StateActive, "")
		run = func(st *proxystore.Store) error {
			p.Hosts = setting.List(hosts)
			id, err := CreateCluster(ctx, st, p)
			if err == nil {
				_, err = fmt.Fprintf(stdout, "cluster %s created (id %d)\n", p.Name, id)
			}
			return err
		}
	case "key create":
		var cluster, name, roles string
		fs.StringVar(&cluster, "cluster", "", "")
		fs.StringVar(&name, "name", "", "")
		fs.StringVar(&roles, "roles", "", "")
		run = func(st *proxystore.Store) error {
			id, tok, err := CreateKey(ctx, st, cluster, name, setting.List(roles))
			if err == nil {
				_, err = fmt.Fprintf(stdout, "key_id=%s\nkey=%s\n", id, tok)
			}
			return err
		}
	case "key revoke":
		var id string
		fs.StringVar(&id, "id", "", "")
		run = func(st *proxystore.Store) error {
			err := st.RevokeKey(ctx, id)
			if err == nil {
				_, err = fmt.Fprintf(stdout, "key %s revoked\n", id)
			}
			return err
		}
	default:
		return ErrUsage
	}
	if err := fs.Parse(args[2:]); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	st, err := proxystore.Open(ctx, cfg.DatabaseURL, cfg.Schema)
	if err != nil {
		return err
	}
	defer st.Close()
	return run(st)
}
