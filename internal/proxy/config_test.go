package proxy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy"
)

// TestConfigConnectionLimits: the connection settings have their documented defaults, are read from the
// environment, and a write timeout that would cut off the upstream timeout's 504 is refused.
func TestConfigConnectionLimits(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (proxy.Config, error) {
		env["QUEEN_PROXY_DATABASE_URL"] = "postgres://x"
		return proxy.LoadConfig(func(k string) string { return env[k] })
	}
	c, err := load(map[string]string{})
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, c.ReadHeaderTimeout)
	require.Equal(t, 60*time.Second, c.ReadTimeout)
	require.Equal(t, 45*time.Second, c.WriteTimeout)
	require.Equal(t, 60*time.Second, c.IdleTimeout)
	require.Equal(t, 300*time.Second, c.MaxPollWait)
	require.Equal(t, 10000, c.MaxConns)
	require.Equal(t, 1000, c.MaxConnsPerCluster)

	c, err = load(map[string]string{"QUEEN_PROXY_IDLE_TIMEOUT_MS": "1500", "QUEEN_PROXY_MAX_CONNS_PER_CLUSTER": "7"})
	require.NoError(t, err)
	require.Equal(t, 1500*time.Millisecond, c.IdleTimeout)
	require.Equal(t, 7, c.MaxConnsPerCluster)

	_, err = load(map[string]string{"QUEEN_PROXY_WRITE_TIMEOUT_MS": "30000"})
	require.ErrorContains(t, err, "QUEEN_PROXY_WRITE_TIMEOUT_MS (30000) must exceed QUEEN_PROXY_UPSTREAM_TIMEOUT_MS (30000)")
	_, err = load(map[string]string{"QUEEN_PROXY_MAX_CONNS": "0"})
	require.ErrorContains(t, err, "QUEEN_PROXY_MAX_CONNS must be a positive integer")
}
