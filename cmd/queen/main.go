// Command queen runs the Queen broker: `queen serve` (the default) reads the environment, starts the
// broker and serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/config"
	"github.com/queen-go/queen/internal/version"
)

func main() {
	if code, done := parseArgs(os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := newLogger(cfg)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := broker.Run(ctx, cfg, log); err != nil {
		log.Error("broker stopped", slog.Any("error", err))
		os.Exit(1)
	}
}

// parseArgs handles the command line: `serve` (or nothing) runs the broker; -h/--help/help prints the
// usage and `version`/--version the build, and exit 0; anything else prints the usage and exits 2.
// done is false when the broker should run.
func parseArgs(args []string, stdout, stderr io.Writer) (code int, done bool) {
	if len(args) == 1 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, version.String("queen"))
		return 0, true
	}
	rest := args
	if len(rest) > 0 && rest[0] == "serve" {
		rest = rest[1:]
	}
	for _, a := range rest {
		switch a {
		case "-h", "-help", "--help", "help":
			fmt.Fprint(stdout, config.Usage())
			return 0, true
		}
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "queen: unknown argument %q\n\n%s", rest[0], config.Usage())
		return 2, true
	}
	return 0, false
}

func newLogger(cfg config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToLower(cfg.LogLevel)))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
