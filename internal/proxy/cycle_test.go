package proxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/proxy/proxystore"
	"github.com/queen-go/queen/internal/testenv"
)

// TestStreamCyclePushes: the sink pushes of POST /streams/v1/cycle (push_items) meet the same caps,
// quotas and message bucket as POST /api/v1/push, and count only when the broker reports the cycle
// committed (a cycle answers 200 either way).
func TestStreamCyclePushes(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBroker(t, brokerEnv())
	b := newBundle(t, bundleOpts{})
	b.plan(t, "streams", func(p *proxystore.Plan) {
		p.FeatureStreams = true
		p.MaxPayloadBytes = 100
		p.MaxBatchItems = 3
		p.MonthlyMessageQuota = 3
	})
	h, k, _ := b.cluster(t, "flow", "streams", broker.URL)

	r := b.do(t, h, k, "POST", "/streams/v1/queries", map[string]any{"name": "agg", "source_queue": "src",
		"sink_queue": "sink", "config_hash": "h1"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var reg struct {
		QueryID string `json:"query_id"`
	}
	require.NoError(t, json.Unmarshal(r.body, &reg))
	const partition = "00000000-0000-7000-8000-000000000001" // sink pushes need no source message
	cycle := func(queryID string, payloads ...string) map[string]any {
		var its []map[string]any
		for _, p := range payloads {
			its = append(its, map[string]any{"queue": "sink", "payload": p})
		}
		return map[string]any{"query_id": queryID, "partition_id": partition, "push_items": its}
	}

	msg := requireCode(t, b.do(t, h, k, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "a", strings.Repeat("z", 200))), 413, "payload_too_large")
	require.Equal(t, "item 1: payload 202 bytes exceeds max_payload_bytes (100)", msg)
	msg = requireCode(t, b.do(t, h, k, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "a", "b", "c", "d")), 413, "payload_too_large")
	require.Equal(t, "batch of 4 items exceeds max_batch_items (3)", msg)

	// A cycle the broker rolls back (an unknown state op) answers 200 success:false and counts nothing.
	bad := cycle(reg.QueryID, "a", "b", "c")
	bad["state_ops"] = []map[string]any{{"type": "merge", "key": "k"}}
	r = b.do(t, h, k, "POST", "/streams/v1/cycle", bad)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"success":false`)

	r = b.do(t, h, k, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "a", "b"))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"success":true`)
	// Two of three monthly messages used: two more are refused, one passes; a cycle without sink pushes
	// is not a push.
	requireCode(t, b.do(t, h, k, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "c", "d")), 403, "quota_exceeded")
	requireCode(t, b.do(t, h, k, "POST", "/api/v1/push", items("tq", 2, 10)), 403, "quota_exceeded")
	r = b.do(t, h, k, "POST", "/streams/v1/cycle", cycle(reg.QueryID))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"success":true`)
	require.Equal(t, http.StatusCreated, b.do(t, h, k, "POST", "/api/v1/push", items("tq", 1, 10)).status)
	requireCode(t, b.do(t, h, k, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "e")), 403, "quota_exceeded")

	// The message bucket takes one token per sink item.
	b.plan(t, "slow-streams", func(p *proxystore.Plan) {
		p.FeatureStreams = true
		p.MessageRate, p.MessageBurst = 1, 2
	})
	h2, k2, _ := b.cluster(t, "slowflow", "slow-streams", broker.URL)
	r = b.do(t, h2, k2, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "a", "b"))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = b.do(t, h2, k2, "POST", "/streams/v1/cycle", cycle(reg.QueryID, "c"))
	require.Equal(t, "message rate limit exceeded", requireCode(t, r, 429, "rate_limited"))
	require.Equal(t, 1, r.retryAfter(t))
}
