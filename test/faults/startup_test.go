package faults

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartsWhileDatabaseIsDown starts the broker binary while its (never migrated) PostgreSQL is
// stopped: it serves /livez, answers /health 503 without connection details, spools pushes; when the
// database appears it migrates, replays the spool and takes pushes directly.
func TestStartsWhileDatabaseIsDown(t *testing.T) {
	c := ownCluster(t)
	require.NoError(t, c.Stop(t.Context()))
	p := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": t.TempDir(),
		"FILE_BUFFER_FLUSH_MS": "50", "DB_CONNECTION_TIMEOUT": "300"})
	code, body := getText(t, p.base+"/livez")
	require.Equal(t, http.StatusOK, code, body)
	code, body = getText(t, p.base+"/health")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.NotContains(t, body, "127.0.0.1")
	code, body = getText(t, p.base+"/readyz")
	require.Equal(t, http.StatusOK, code, "the spool takes pushes: ready: %s", body)
	require.Contains(t, body, `"spooling":true`)
	for _, tx := range []string{"early1", "early2"} {
		code, body = pushOne(t, p.base, tx, tx)
		require.Equal(t, http.StatusCreated, code, body)
		require.Contains(t, body, `"buffered"`)
	}

	require.NoError(t, c.Start(t.Context()))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := getText(c, p.base+"/health")
		assert.Equal(c, http.StatusOK, code, "never healthy: %s\n%s", body, p.out)
	}, 60*time.Second, 100*time.Millisecond)
	waitSpoolEmpty(t, p.base)
	code, body = getText(t, p.base+"/readyz")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"database":"connected"`)
	code, body = pushOne(t, p.base, "late", 3)
	require.Equal(t, http.StatusCreated, code, body)
	require.Contains(t, body, `"queued"`)
	require.Equal(t, []string{"early1", "early2", "late"}, stored(t, c.URL("postgres"))["p0"])
	require.False(t, strings.Contains(p.out.String(), "dead spool"), p.out.String())
}
