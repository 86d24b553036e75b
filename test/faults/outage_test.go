package faults

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutageAnswers503AndLogsOnce stops PostgreSQL under a running broker whose background jobs run
// every 100 ms: pops are answered 503 with Retry-After (nothing was taken: retry), not 500; the jobs'
// failing passes are one warning, not one each; and a shutdown with pushes still in the spool says how
// many remain and where.
func TestOutageAnswers503AndLogsOnce(t *testing.T) {
	c := ownCluster(t)
	spoolDir := t.TempDir()
	p := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": spoolDir,
		"DB_CONNECTION_TIMEOUT": "300", "STATS_INTERVAL_MS": "100", "EVICTION_INTERVAL": "100",
		"VACUUM_INTERVAL_MS": "100", "ANALYZE_INTERVAL_MS": "100", "RETENTION_INTERVAL": "100", "SHUTDOWN_TIMEOUT_MS": "2000"})
	code, body := pushOne(t, p.base, "before", 1)
	require.Equal(t, http.StatusCreated, code, body)
	require.NoError(t, c.Stop(t.Context()))

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, p.out.String(), "PostgreSQL unreachable", "the broker's output")
	}, 30*time.Second, 20*time.Millisecond, "the outage was never logged")
	for range 5 {
		for _, path := range []string{"/api/v1/pop/queue/durable", "/api/v1/pop/queue/durable?wait=true&timeout=500",
			"/api/v1/pop?namespace=x", "/api/v1/pop/queue/durable?consumerGroup=g"} {
			resp, err := http.Get(p.base + path)
			require.NoError(t, err)
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %s", path, out)
			require.Equal(t, "5", resp.Header.Get("Retry-After"), path)
			require.Contains(t, string(out), `"error":"database unavailable`, path)
		}
	}
	code, body = pushOne(t, p.base, "during", 2)
	require.Equal(t, http.StatusCreated, code, body)
	require.Contains(t, body, `"buffered"`)

	// By now the five jobs have each failed several passes.
	logs := p.out.String()
	require.Equal(t, 1, strings.Count(logs, "PostgreSQL unreachable"), logs)
	require.NotContains(t, logs, "background pass failed", logs)
	require.NotContains(t, logs, "request failed", "a 503 per request is not an error per request: %s", logs)

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	_ = p.cmd.Wait()
	dir, err := filepath.Abs(spoolDir)
	require.NoError(t, err)
	require.Contains(t, p.out.String(), "pushes remain in the spool", p.out.String())
	require.Contains(t, p.out.String(), "pushes=1 dir="+dir, p.out.String())
}
