// Command queen-proxy runs the multi-tenant proxy in front of Queen brokers (`serve`, the default) and
// manages its plans, clusters and API keys (`plan create`, `cluster create`, `key create`, `key revoke`);
// `version` prints the release, commit and Go version.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/version"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(os.Stdout, proxy.Usage)
		return
	}
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprintln(os.Stdout, version.String("queen-proxy"))
		return
	}
	cfg, err := proxy.LoadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := newLogger(cfg.LogLevel)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if len(args) == 0 || args[0] == "serve" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		if err := proxy.Run(ctx, cfg, log, reg); err != nil {
			log.Error("queen-proxy stopped", slog.Any("error", err))
			os.Exit(1)
		}
		return
	}
	if err := proxy.Command(ctx, cfg, args, os.Stdout); err != nil {
		if errors.Is(err, proxy.ErrUsage) {
			fmt.Fprintf(os.Stderr, "%v\n\n%s", err, proxy.Usage)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func newLogger(levelName string) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToLower(levelName)))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
