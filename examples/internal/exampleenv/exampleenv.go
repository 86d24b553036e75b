// Package exampleenv is the process set-up the example programs share, so that each of them shows only
// its use of the SDK: a logger, a context that Ctrl-C cancels, the exit status, and the client
// configuration read from the environment. To copy an example out of this repository, copy Main and
// Config along with it (or inline them: they are a few lines each).
package exampleenv

import (
	"context"
	"log/slog"
	"os"
	"os/signal"

	"github.com/queen-go/queen/client"
)

// DefaultURL is the broker an example talks to when the environment names none.
const DefaultURL = "http://localhost:6632"

// Main runs run with a text logger on stdout and a context that Ctrl-C cancels; when run fails it logs
// the error and exits with status 1.
func Main(run func(ctx context.Context, log *slog.Logger) error) {
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, log); err != nil {
		log.Error("example failed", slog.Any("error", err))
		os.Exit(1)
	}
}

// Config is the client configuration of the examples: the broker URLs of QUEEN_SERVER, else QUEEN_URL
// (comma-separated for failover; DefaultURL when neither is set), the bearer token of QUEEN_TOKEN
// (optional) and log.
func Config(log *slog.Logger) client.Config {
	return client.Config{URLs: client.URLsFromEnv(DefaultURL), Token: os.Getenv("QUEEN_TOKEN"), Logger: log}
}
