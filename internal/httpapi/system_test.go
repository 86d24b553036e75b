package httpapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaintenanceAnswers checks the maintenance routes' answers against the contract (§8.4): the GET
// carries both flags and the spool mapped onto bufferStats, the dead-spool file counted as failed files.
func TestMaintenanceAnswers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dead := `{"at":"2026-01-01T00:00:00Z","reason":"x","item":{"q":"a","p":"Default","d":1}}` + "\n"
	dead += dead
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dead-spool.jsonl"), []byte(dead), 0o600))
	a := setup(t, map[string]string{"FILE_BUFFER_DIR": dir}).raw

	get := func() map[string]any {
		t.Helper()
		var m map[string]any
		a.json("GET", "/api/v1/system/maintenance", nil, http.StatusOK, &m)
		return m
	}
	size := float64(len(dead))
	require.Equal(t, map[string]any{"maintenanceMode": false, "popMaintenanceMode": false, "bufferedMessages": 0.0,
		"bufferHealthy": true, "bufferStats": map[string]any{"pendingCount": 0.0, "failedCount": 2.0, "dbHealthy": true,
			"failedFiles": map[string]any{"count": 1.0, "totalBytes": size, "totalMB": size / (1 << 20),
				"failoverCount": 2.0, "qos0Count": 0.0}}, "failedReplays": 0.0}, get())

	for _, body := range []any{map[string]any{}, map[string]any{"enabled": "yes"}, map[string]any{"enabled": nil}} {
		for _, path := range []string{"/api/v1/system/maintenance", "/api/v1/system/maintenance/pop"} {
			st, b := a.do("POST", path, body)
			require.Equal(t, http.StatusBadRequest, st, "%s %v", path, body)
			require.JSONEq(t, `{"error":"enabled (boolean) is required"}`, string(b))
		}
	}

	post := func(path string, on bool) string {
		t.Helper()
		st, b := a.do("POST", path, map[string]bool{"enabled": on})
		require.Equal(t, http.StatusOK, st, string(b))
		return string(b)
	}
	require.JSONEq(t, `{"popMaintenanceMode":true,"message":"Pop maintenance mode ENABLED. All POP operations will return empty arrays."}`,
		post("/api/v1/system/maintenance/pop", true))
	_, b := a.do("GET", "/api/v1/system/maintenance/pop", nil)
	require.JSONEq(t, `{"popMaintenanceMode":true,"message":"Pop maintenance mode is ON. All POP operations return empty arrays."}`, string(b))
	require.Equal(t, true, get()["popMaintenanceMode"], "the push route's answer carries the pop flag")
	require.JSONEq(t, `{"popMaintenanceMode":false,"message":"Pop maintenance mode DISABLED. Normal operation resumed."}`,
		post("/api/v1/system/maintenance/pop", false))
	_, b = a.do("GET", "/api/v1/system/maintenance/pop", nil)
	require.JSONEq(t, `{"popMaintenanceMode":false,"message":"Pop maintenance mode is OFF. Normal operation."}`, string(b))

	require.JSONEq(t, `{"maintenanceMode":true,"bufferedMessages":0,"bufferHealthy":true,"message":"Maintenance mode ENABLED. All PUSHes routing to file buffer."}`,
		post("/api/v1/system/maintenance", true))
	a.push(pushItem{Queue: "maint-answers", Payload: map[string]int{"i": 1}})
	m := get()
	require.Equal(t, true, m["maintenanceMode"])
	require.Equal(t, 1.0, m["bufferedMessages"], "the push waits in the spool while maintenance is on")
	require.Equal(t, 1.0, m["bufferStats"].(map[string]any)["pendingCount"])

	var off struct {
		MaintenanceMode bool   `json:"maintenanceMode"`
		Message         string `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(post("/api/v1/system/maintenance", false)), &off))
	require.Equal(t, "Maintenance mode DISABLED. Background processor will drain buffer to DB.", off.Message)
	require.False(t, off.MaintenanceMode)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var m map[string]any
		if a.getJSON(c, "/api/v1/system/maintenance", &m) {
			assert.Equal(c, 0.0, m["bufferedMessages"], "buffered")
		}
	}, 10*time.Second, 10*time.Millisecond)
	got := a.pop("/api/v1/pop/queue/maint-answers?batch=1")
	require.NotNil(t, got, "the spooled push reached the queue")
	require.Len(t, got.Messages, 1)
}
