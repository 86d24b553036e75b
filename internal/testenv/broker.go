package testenv

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/config"
)

// RunningBroker is a broker started for one test.
type RunningBroker struct {
	URL         string // http://127.0.0.1:port
	DatabaseURL string
	Broker      *broker.Broker
}

// StartBroker starts the real broker assembly on a loopback port. env overrides the environment the
// broker reads; without DATABASE_URL it gets a fresh database of its own. It is shut down at cleanup.
func StartBroker(t testing.TB, env map[string]string) *RunningBroker {
	t.Helper()
	return StartBrokerWith(t, env, broker.Options{})
}

// StartBrokerWith is StartBroker with broker options (a Clock's Now, say).
func StartBrokerWith(t testing.TB, env map[string]string, opt broker.Options) *RunningBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: listen: %v", err)
	}
	return StartBrokerOn(t, env, opt, ln)
}

// StartBrokerOn is StartBrokerWith serving on ln, a loopback listener the test may wrap to watch the
// broker's side of its connections.
func StartBrokerOn(t testing.TB, env map[string]string, opt broker.Options, ln net.Listener) *RunningBroker {
	t.Helper()
	vars := map[string]string{}
	for k, v := range env {
		vars[k] = v
	}
	if vars["DATABASE_URL"] == "" {
		vars["DATABASE_URL"] = NewDatabase(t)
		if pooler := os.Getenv(EnvPoolerURL); pooler != "" {
			throughPooler(t, vars, pooler)
		}
	}
	if vars["FILE_BUFFER_DIR"] == "" {
		vars["FILE_BUFFER_DIR"] = t.TempDir() // each broker needs a spool of its own
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("testenv: config: %v", err)
	}
	var out io.Writer = io.Discard
	if os.Getenv("QUEEN_TEST_LOG") != "" {
		out = os.Stderr
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := broker.StartWith(context.Background(), cfg, log, ln, opt)
	if err != nil {
		t.Fatalf("testenv: start broker: %v", err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return &RunningBroker{URL: "http://" + ln.Addr().String(), DatabaseURL: cfg.DatabaseURL, Broker: b}
}

// EnvPoolerURL names a transaction-mode pooler (PgBouncer) in front of the test server: brokers started
// on a database of their own then reach it through the pooler (DATABASE_POOL_MODE=transaction) and
// LISTEN on it directly (test/faults TestClientSuiteThroughPgbouncer runs the client suite so).
const EnvPoolerURL = "QUEEN_TEST_POOLER_URL"

// throughPooler points the broker's DATABASE_URL at the same database through the pooler.
func throughPooler(t testing.TB, vars map[string]string, pooler string) {
	t.Helper()
	direct := vars["DATABASE_URL"]
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	through, err := withDatabase(pooler, strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	vars["DATABASE_URL"], vars["DATABASE_LISTEN_URL"], vars["DATABASE_POOL_MODE"] = through, direct, "transaction"
}
