package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/config"
)

// startBrokerErr starts a broker on an existing database and returns its start error (nil: running).
func startBrokerErr(t *testing.T, dbURL string) (*broker.Broker, error) {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b, err := broker.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), ln)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return b, nil
}
