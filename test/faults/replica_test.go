package faults

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadReplica: with DATABASE_READ_URL naming a streaming standby, the read routes are served by it
// while its lag is within DATABASE_READ_MAX_LAG_MS, and every one of them answers there (none writes);
// a standby held back past the limit, or gone, leaves them to the primary; /health and the metrics say
// which (docs/operations.md "Read replica").
func TestReadReplica(t *testing.T) {
	p := startHAPair(t, false)
	env := func(maxLagMS string) map[string]string {
		return map[string]string{"DATABASE_URL": p.primary.URL("postgres"), "DATABASE_READ_URL": p.standby.URL("postgres"),
			"DATABASE_READ_MAX_LAG_MS": maxLagMS, "FILE_BUFFER_DIR": t.TempDir()}
	}
	patient, strict := startProc(t, env("60000")), startProc(t, env("300"))

	push := func(queue string) (partitionID string) {
		t.Helper()
		st, body, err := post(patient.base+"/api/v1/push", map[string]any{"items": []map[string]any{
			{"queue": queue, "partition": "p1", "payload": map[string]any{"n": 1}, "transactionId": "m1"}}})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, st, "%s", body)
		var res []struct {
			PartitionID string `json:"partition_id"`
		}
		require.NoError(t, json.Unmarshal(body, &res))
		return res[0].PartitionID
	}
	status := func(base, path string) int {
		code, _ := getText(t, base+path)
		return code
	}
	type replicaState struct {
		Status     string   `json:"status"`
		LagSeconds *float64 `json:"lagSeconds"`
	}
	// replica reads /health's readReplica; failures go to c, or fail the test when c is nil.
	replica := func(c *assert.CollectT, base string) replicaState {
		var at assert.TestingT = c
		if c == nil {
			at = t
		}
		var h struct {
			ReadReplica replicaState `json:"readReplica"`
		}
		resp, err := http.Get(base + "/health")
		if assert.NoError(at, err) {
			defer resp.Body.Close()
			assert.NoError(at, json.NewDecoder(resp.Body).Decode(&h))
		}
		return h.ReadReplica
	}

	pid := push("replicated")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, b := range []*brokerProc{patient, strict} {
			assert.Equal(c, "ok", replica(c, b.base).Status, "%s", b.base)
		}
		assert.Equal(c, http.StatusOK, status(patient.base, "/api/v1/resources/queues/replicated"), "the standby has the queue")
	}, 30*time.Second, 50*time.Millisecond)

	// Every routed read route answers from the standby: none of them writes.
	for _, path := range []string{
		"/api/v1/resources/queues", "/api/v1/resources/queues/replicated", "/api/v1/resources/namespaces",
		"/api/v1/resources/tasks", "/api/v1/resources/overview", "/api/v1/status/queues", "/api/v1/status/queues/replicated",
		"/api/v1/status/queues/replicated/messages", "/api/v1/messages?queue=replicated", "/api/v1/messages/" + pid + "/m1",
		"/api/v1/traces/names", "/api/v1/traces/by-name/x", "/api/v1/traces/" + pid + "/m1", "/api/v1/status",
		"/api/v1/status/analytics", "/api/v1/analytics/queue-lag", "/api/v1/analytics/queue-ops", "/api/v1/analytics/retention",
		"/api/v1/analytics/worker-metrics", "/api/v1/analytics/system-metrics", "/api/v1/analytics/queue-parked-replicas",
	} {
		require.Equal(t, http.StatusOK, status(patient.base, path), "GET %s", path)
	}

	// Replay held: the patient broker keeps reading the standby, which has not seen the new queue, and
	// reports a growing lag; the strict one is soon past its limit and reads the primary.
	standby := p.standby.URL("postgres")
	var paused bool
	require.NoError(t, queryRow(t, standby, "SELECT pg_wal_replay_pause() IS NULL", &paused))
	t.Cleanup(func() { _ = queryRow(t, standby, "SELECT pg_wal_replay_resume() IS NULL", &paused) })
	require.EventuallyWithT(t, func(c *assert.CollectT) { // a pause is only requested until replay reaches it
		var state string
		if assert.NoError(c, queryRow(t, standby, "SELECT pg_get_wal_replay_pause_state()", &state)) {
			assert.Equal(c, "paused", state)
		}
	}, 30*time.Second, 20*time.Millisecond)
	push("held-back")
	require.Equal(t, http.StatusNotFound, status(patient.base, "/api/v1/resources/queues/held-back"), "read from the standby")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rs := replica(c, strict.base)
		assert.Equal(c, "lagging", rs.Status)
		assert.Equal(c, http.StatusOK, status(strict.base, "/api/v1/resources/queues/held-back"), "read from the primary")
		rp := replica(c, patient.base)
		if assert.Equal(c, "ok", rp.Status) && assert.NotNil(c, rp.LagSeconds) {
			assert.Greater(c, *rp.LagSeconds, 0.3, "the patient broker's lag")
		}
	}, 30*time.Second, 50*time.Millisecond)
	metrics := func(base string) string {
		_, body := getText(t, base+"/metrics/prometheus")
		return body
	}
	require.Contains(t, strict.out.String(), "read replica lagging: the read routes go to the primary", "logged")
	require.Contains(t, metrics(strict.base), "queen_read_replica_serving 0")
	require.Contains(t, metrics(patient.base), "queen_read_replica_serving 1")

	require.NoError(t, queryRow(t, standby, "SELECT pg_wal_replay_resume() IS NULL", &paused))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, http.StatusOK, status(patient.base, "/api/v1/resources/queues/held-back"), "the standby caught up")
		assert.Equal(c, "ok", replica(c, strict.base).Status)
	}, 30*time.Second, 50*time.Millisecond)

	// Standby gone: the first read after it, before any probe noticed, fails over to the primary
	// within the request, and the reads stay there.
	push("after-standby")
	require.Equal(t, "ok", replica(nil, patient.base).Status)
	require.NoError(t, p.standby.Stop(context.Background()))
	require.Equal(t, http.StatusOK, status(patient.base, "/api/v1/resources/queues/"+url.PathEscape("after-standby")))
	require.Equal(t, "unreachable", replica(nil, patient.base).Status)
	require.Contains(t, patient.out.String(), "read replica unreachable: the read routes go to the primary", "logged")
	require.Equal(t, http.StatusOK, status(patient.base, "/api/v1/messages?queue=after-standby"))
}
