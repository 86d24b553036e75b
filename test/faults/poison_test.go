package faults

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pushOne(t *testing.T, base, tx string, payload any) (int, string) {
	t.Helper()
	code, body, err := post(base+"/api/v1/push", map[string]any{"items": []map[string]any{
		{"queue": "durable", "partition": "p0", "payload": payload, "transactionId": tx}}})
	require.NoError(t, err)
	return code, string(body)
}

func getText(t tester, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestPoisonedSpoolNeverStopsPushes runs a real outage: while PostgreSQL is down, a push it would refuse
// (NUL in a payload string) is answered 400 as it would be directly, never spooled; a spooled push that
// PostgreSQL refuses on replay (here a trigger refuses it) goes to the dead-spool file with a log line
// and a metric, and the pushes around it are stored in order; afterwards pushes go straight through.
func TestPoisonedSpoolNeverStopsPushes(t *testing.T) {
	c := ownCluster(t)
	spoolDir := t.TempDir()
	p := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": spoolDir,
		"FILE_BUFFER_FLUSH_MS": "50", "DB_CONNECTION_TIMEOUT": "500"})
	code, body := pushOne(t, p.base, "before", 0)
	require.Equal(t, http.StatusCreated, code, body)

	conn, err := pgx.Connect(t.Context(), c.URL("postgres"))
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), `
		CREATE FUNCTION queenmq.refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.payload = '"poison"'::jsonb THEN RAISE EXCEPTION 'poisoned payload'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON queenmq.messages FOR EACH ROW EXECUTE FUNCTION queenmq.refuse_poison();`)
	require.NoError(t, err)
	require.NoError(t, conn.Close(t.Context()))

	require.NoError(t, c.Stop(t.Context()))
	code, body = pushOne(t, p.base, "nul", map[string]string{"s": "a\x00b"})
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "bad body: items[0].payload.s")
	for _, tx := range []string{"good1", "poison", "good2"} {
		payload := any(tx)
		code, body = pushOne(t, p.base, tx, payload)
		require.Equal(t, http.StatusCreated, code, body)
		require.Contains(t, body, `"buffered"`, "the outage reached the spool")
	}
	require.NoError(t, c.Start(t.Context()))
	waitSpoolEmpty(t, p.base)

	code, body = pushOne(t, p.base, "after", 1)
	require.Equal(t, http.StatusCreated, code, body)
	require.Contains(t, body, `"queued"`, "pushes go straight to PostgreSQL again")
	require.Equal(t, []string{"before", "good1", "good2", "after"}, stored(t, c.URL("postgres"))["p0"])

	dead, err := os.ReadFile(filepath.Join(spoolDir, "dead-spool.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(dead)), "\n")
	require.Len(t, lines, 1)
	var rec struct {
		Reason string `json:"reason"`
		Item   struct {
			TransactionID string `json:"t"`
		} `json:"item"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	require.Equal(t, "poison", rec.Item.TransactionID)
	require.Contains(t, rec.Reason, "poisoned payload")

	_, metrics := getText(t, p.base+"/metrics/prometheus")
	require.Contains(t, metrics, "queen_spool_dead_total 1")
	require.Contains(t, metrics, "queen_spool_stalled 0")
	require.Contains(t, p.out.String(), "moved to the dead spool")
	code, health := getText(t, p.base+"/health")
	require.Equal(t, http.StatusOK, code, health)
	var h struct {
		Spool struct {
			Pending     int64 `json:"pending"`
			DeadSpooled int64 `json:"deadSpooled"`
			Stalled     bool  `json:"stalled"`
		} `json:"spool"`
	}
	require.NoError(t, json.Unmarshal([]byte(health), &h))
	require.EqualValues(t, 1, h.Spool.DeadSpooled)
	require.False(t, h.Spool.Stalled)
}

// TestStalledSpoolShowsInHealth keeps PostgreSQL down with pushes spooled: /health (503) and the
// metrics say the spool is stalled, with no connection details in the body.
func TestStalledSpoolShowsInHealth(t *testing.T) {
	c := ownCluster(t)
	p := startProc(t, map[string]string{"DATABASE_URL": c.URL("postgres"), "FILE_BUFFER_DIR": t.TempDir(),
		"FILE_BUFFER_FLUSH_MS": "50", "DB_CONNECTION_TIMEOUT": "300"})
	require.NoError(t, c.Stop(t.Context()))
	code, body := pushOne(t, p.base, "held", 1)
	require.Equal(t, http.StatusCreated, code, body)
	var health string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, health = getText(c, p.base+"/health")
		assert.Contains(c, health, `"stalled":true`)
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, http.StatusServiceUnavailable, code, health)
	require.Contains(t, health, `"stalled":true`)
	require.Contains(t, health, `"lastReplayError":"database unreachable"`)
	u := c.URL("postgres")
	for _, leak := range []string{"127.0.0.1", "localhost", "postgres", u} {
		require.NotContains(t, health, leak)
	}
	_, metrics := getText(t, p.base+"/metrics/prometheus")
	require.Contains(t, metrics, "queen_spool_stalled 1")
}
