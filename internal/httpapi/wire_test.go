package httpapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/httpapi"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/wire from the broker's answers")

// wireDir holds the golden JSON of every read route: the wire contract the SDK reads.
var wireDir = filepath.Join("..", "..", "testdata", "wire")

var (
	uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	// Error envelopes end with the request id of the answer.
	requestRe = regexp.MustCompile(` \(request [0-9a-f]+\)$`)
	timeRe    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
)

// normalize replaces what differs from run to run (ids, instants, measured numbers) by placeholders,
// so that the golden file pins the shape, the keys, the types and every value that is deterministic.
// Under a key in volatile a number becomes "<number>" and a string "<string>"; under a key in series an array keeps only its
// first element, with every number in it replaced. An array under a volatile key becomes "<array>",
// and the volatile key "*" pins only the shape of the answer: keys, nesting and each array's first element.
func normalize(v any, key string, volatile, series map[string]bool, inSeries bool) any {
	if _, isArray := v.([]any); isArray && volatile[key] {
		return "<array>"
	}
	if volatile["*"] {
		// The whole answer is measured: only its shape is pinned.
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = normalize(e, k, volatile, series, inSeries)
			}
			return out
		case []any:
			if len(x) > 1 {
				x = x[:1]
			}
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = normalize(e, key, volatile, series, inSeries)
			}
			return out
		}
		return "<value>"
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e, k, volatile, series, inSeries)
		}
		return out
	case []any:
		if series[key] && len(x) > 1 {
			x = x[:1]
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, key, volatile, series, inSeries || series[key])
		}
		return out
	case string:
		switch {
		case volatile[key]:
			return "<string>"
		case uuidRe.MatchString(x):
			return "<uuid>"
		case timeRe.MatchString(x):
			return "<time>"
		}
		return requestRe.ReplaceAllString(x, " (request <id>)")
	case float64:
		if inSeries || volatile[key] {
			return "<number>"
		}
		return x
	}
	return v
}

// TestWireGolden pins the JSON of every read route against testdata/wire (go test -run TestWireGolden
// -update rewrites them). The data set is built through the API: one queue with two partitions, a
// consumer group that completed one message and dead-lettered another, one leased message and a trace.
func TestWireGolden(t *testing.T) {
	t.Parallel()
	a := setup(t, map[string]string{"STATS_INTERVAL_MS": "100", "POP_WAIT_MAX_INTERVAL_MS": "100"}).raw
	st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": "wire-q", "namespace": "wire-ns", "task": "wire-task",
		"options": map[string]any{"retryLimit": 2, "priority": 3}})
	require.Equal(t, http.StatusOK, st, string(body))
	// Two pushes: listings are newest first, and messages of one push share their creation instant.
	pushed := a.push(pushItem{Queue: "wire-q", Partition: "p1", Payload: map[string]any{"n": 1}, TransactionID: "w1"},
		pushItem{Queue: "wire-q", Partition: "p1", Payload: map[string]any{"n": 2}, TransactionID: "w2"})
	a.push(pushItem{Queue: "wire-q", Partition: "p2", Payload: map[string]any{"n": 3}, TransactionID: "w3"})
	p1 := pushed[0].PartitionID
	got := a.pop("/api/v1/pop/queue/wire-q/partition/p1?consumerGroup=wire-g&batch=2")
	require.Len(t, got.Messages, 2)
	st, body = a.do("POST", "/api/v1/ack/batch", map[string]any{"consumerGroup": "wire-g", "acknowledgments": []map[string]any{
		{"transactionId": "w1", "partitionId": p1, "leaseId": got.Messages[0].LeaseID, "status": "completed"},
		{"transactionId": "w2", "partitionId": p1, "leaseId": got.Messages[1].LeaseID, "status": "dlq", "error": "boom"}}})
	require.Equal(t, http.StatusOK, st, string(body))
	leased := a.pop("/api/v1/pop/queue/wire-q/partition/p2?batch=1")
	require.Len(t, leased.Messages, 1)
	st, body = a.do("POST", "/api/v1/traces", map[string]any{"transactionId": "w1", "partitionId": p1, "data": map[string]any{"step": 1},
		"traceNames": []string{"wire-trace"}, "consumerGroup": "wire-g", "eventType": "info", "workerId": "worker-1"})
	require.Equal(t, http.StatusCreated, st, string(body))
	// A stream query with one state row, read back by the POST read route of streams.
	st, body = a.do("POST", "/streams/v1/queries", map[string]any{"name": "wire-stream", "source_queue": "wire-q",
		"sink_queue": "wire-sink", "config_hash": "wire-hash"})
	require.Equal(t, http.StatusOK, st, string(body))
	var reg struct {
		QueryID string `json:"query_id"`
	}
	require.NoError(t, json.Unmarshal(body, &reg))
	st, body = a.do("POST", "/streams/v1/cycle", map[string]any{"query_id": reg.QueryID, "partition_id": p1,
		"state_ops": []map[string]any{{"type": "upsert", "key": "wire-key", "value": map[string]int{"n": 1}}}})
	require.Equal(t, http.StatusOK, st, string(body))
	// A long-poll parked on an empty queue while the sampler runs, for the parked-replicas series. It
	// runs on a broker of its own: every re-check of a parked pop counts as a pop request, which would
	// make the request counters of the main data set depend on timing.
	idle := setup(t, map[string]string{"STATS_INTERVAL_MS": "100"}).raw
	ctx, cancel := context.WithCancel(t.Context())
	parkedDone := make(chan struct{})
	go func() {
		defer close(parkedDone)
		_, _ = idle.exchange(ctx, "GET", "/api/v1/pop/queue/wire-idle?wait=true&timeout=30000", nil)
	}()
	t.Cleanup(func() { cancel(); <-parkedDone })
	// The listings read rolled-up statistics and the analytics read flushed counters: wait for both.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var qs struct {
			Queues []struct {
				Messages struct{ Total, Pending, Processing int } `json:"messages"`
			} `json:"queues"`
		}
		if !a.getJSON(c, "/api/v1/resources/queues", &qs) {
			return
		}
		// A rollup taken between the pushes and the last pop shows the same total with the leased
		// message still pending: wait for one taken after the lease.
		if !assert.True(c, len(qs.Queues) == 1 && qs.Queues[0].Messages.Total == 3 && qs.Queues[0].Messages.Processing == 1,
			"stats not rolled up yet: %+v", qs) {
			return
		}
		var ops struct {
			Series []struct{ PushMessages, PopMessages, AckSuccess, DLQ int }
		}
		if !a.getJSON(c, "/api/v1/analytics/queue-ops?queue=wire-q", &ops) {
			return
		}
		var push, pop, ok, dlq int
		for _, p := range ops.Series {
			push, pop, ok, dlq = push+p.PushMessages, pop+p.PopMessages, ok+p.AckSuccess, dlq+p.DLQ
		}
		if !assert.True(c, push == 3 && pop == 3 && ok == 1 && dlq == 1,
			"operation counters not flushed yet: push=%d pop=%d ok=%d dlq=%d", push, pop, ok, dlq) {
			return
		}
		// The samples loop: one sampled broker that saw the pushes and pops, and the parked long-poll.
		var wm struct {
			Workers []map[string]any   `json:"workers"`
			Summary map[string]float64 `json:"summary"`
		}
		if !a.getJSON(c, "/api/v1/analytics/worker-metrics", &wm) ||
			!assert.True(c, len(wm.Workers) == 1 && wm.Summary["totalPushMessages"] == 3 && wm.Summary["totalPopMessages"] == 3,
				"worker samples not taken yet: %+v", wm) {
			return
		}
		var parked struct {
			Series []json.RawMessage `json:"series"`
		}
		if idle.getJSON(c, "/api/v1/analytics/queue-parked-replicas?queue=wire-idle", &parked) {
			assert.NotEmpty(c, parked.Series, "parked long-poll not sampled yet")
		}
	}, 20*time.Second, 10*time.Millisecond)

	metricsKeys := []string{"uptime", "rate", "total", "cpu", "user", "system", "rss", "heapUsed", "heapTotal", "external",
		"arrayBuffers", "goroutines", "parked", "poolSize", "idleConnections", "waitingRequests", "acquireWaitsTotal"}
	lag := []string{"avg", "max", "median", "min", "statsAge"}
	// What the samples loop measures about the broker process and the machine it runs on.
	sample := []string{"hostname", "pid", "port", "cpuSysPct", "cpuUserPct", "rssMb", "goroutines", "dbConnections",
		"freeSlots", "jobQueueSize", "parked", "avgEventLoopLagMs", "maxEventLoopLagMs"}
	stream := map[string]any{"query_id": reg.QueryID, "partition_id": p1}
	reqID := []string{"requestId"}
	routes := []struct {
		name, path string
		volatile   []string // keys whose numbers (and strings) are measured, not set by the data set
		series     []string // keys whose arrays are time series: one element pinned, its numbers replaced
		method     string   // GET when empty
		body       any      // request body of a POST read route
		status     int      // 200 when zero
	}{
		{"health", "/health", nil, nil, "", nil, 0},
		{"resources-queues", "/api/v1/resources/queues", []string{"statsAge"}, nil, "", nil, 0},
		{"resources-queue", "/api/v1/resources/queues/wire-q", []string{"seconds"}, nil, "", nil, 0},
		{"resources-namespaces", "/api/v1/resources/namespaces", nil, nil, "", nil, 0},
		{"resources-tasks", "/api/v1/resources/tasks", nil, nil, "", nil, 0},
		{"resources-overview", "/api/v1/resources/overview", lag, nil, "", nil, 0},
		{"status-queues", "/api/v1/status/queues", []string{"statsAge"}, nil, "", nil, 0},
		{"status-queue", "/api/v1/status/queues/wire-q", []string{"seconds"}, nil, "", nil, 0},
		{"status-queue-messages", "/api/v1/status/queues/wire-q/messages", nil, nil, "", nil, 0},
		{"messages", "/api/v1/messages?queue=wire-q", nil, nil, "", nil, 0},
		{"messages-group", "/api/v1/messages?queue=wire-q&consumerGroup=wire-g", nil, nil, "", nil, 0},
		{"message", "/api/v1/messages/" + p1 + "/w1", nil, nil, "", nil, 0},
		{"message-dead", "/api/v1/messages/" + p1 + "/w2", nil, nil, "", nil, 0},
		{"dlq", "/api/v1/dlq?queue=wire-q", nil, nil, "", nil, 0},
		{"dlq-item", "/api/v1/dlq/" + p1 + "/w2?consumerGroup=wire-g", nil, nil, "", nil, 0},
		{"consumer-groups", "/api/v1/consumer-groups", []string{"maxTimeLag"}, nil, "", nil, 0},
		{"consumer-groups-lagging", "/api/v1/consumer-groups/lagging?minLagSeconds=0", []string{"lag_hours", "time_lag_seconds"}, nil, "", nil, 0},
		{"consumer-group", "/api/v1/consumer-groups/wire-g", []string{"timeLagSeconds"}, nil, "", nil, 0},
		{"trace-names", "/api/v1/traces/names", nil, nil, "", nil, 0},
		{"traces-by-name", "/api/v1/traces/by-name/wire-trace", nil, nil, "", nil, 0},
		{"traces", "/api/v1/traces/" + p1 + "/w1", nil, nil, "", nil, 0},
		{"status", "/api/v1/status", []string{"statsAge"}, []string{"throughput"}, "", nil, 0},
		{"status-buffers", "/api/v1/status/buffers", nil, nil, "", nil, 0},
		{"access", "/api/v1/access", nil, nil, "", nil, 0},
		{"status-analytics", "/api/v1/status/analytics", nil, []string{"dataPoints"}, "", nil, 0},
		{"analytics-queue-lag", "/api/v1/analytics/queue-lag", nil, []string{""}, "", nil, 0},
		{"analytics-queue-ops", "/api/v1/analytics/queue-ops?queue=wire-q", nil, []string{"series"}, "", nil, 0},
		{"analytics-retention", "/api/v1/analytics/retention", nil, []string{"series"}, "", nil, 0},
		{"metrics", "/metrics", metricsKeys, nil, "", nil, 0},
		{"system-maintenance", "/api/v1/system/maintenance", nil, nil, "", nil, 0},
		{"system-maintenance-pop", "/api/v1/system/maintenance/pop", nil, nil, "", nil, 0},
		{"livez", "/livez", nil, nil, "", nil, 0},
		{"readyz", "/readyz", nil, nil, "", nil, 0},
		{"analytics-worker-metrics", "/api/v1/analytics/worker-metrics", append(sample, "pointCount", "avgLagMs", "maxLagMs"), []string{"timeSeries"}, "", nil, 0},
		{"analytics-system-metrics", "/api/v1/analytics/system-metrics", append(sample, "pointCount"), []string{"timeSeries"}, "", nil, 0},
		{"analytics-queue-parked-replicas", "/api/v1/analytics/queue-parked-replicas?queue=wire-idle", sample, []string{"series"}, "", nil, 0},
		{"analytics-postgres-stats", "/api/v1/analytics/postgres-stats", []string{"*", "activeQueries"}, nil, "", nil, 0},
		{"migration-status", "/api/v1/migration/status", reqID, nil, "", nil, http.StatusNotImplemented},
		{"migration-test-connection", "/api/v1/migration/test-connection", reqID, nil, "POST", map[string]any{}, http.StatusNotImplemented},
		{"migration-start", "/api/v1/migration/start", reqID, nil, "POST", map[string]any{}, http.StatusNotImplemented},
		{"migration-validate", "/api/v1/migration/validate", reqID, nil, "POST", map[string]any{}, http.StatusNotImplemented},
		{"migration-reset", "/api/v1/migration/reset", reqID, nil, "POST", map[string]any{}, http.StatusNotImplemented},
		{"streams-state", "/streams/v1/state/get", nil, nil, "POST", stream, 0},
		{"streams-state-prefix", "/streams/v1/state/get", nil, nil, "POST", map[string]any{"query_id": reg.QueryID, "partition_id": p1, "key_prefix": "none-"}, 0},
	}
	set := func(keys []string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	for _, rt := range routes {
		method, status := cmp.Or(rt.method, "GET"), cmp.Or(rt.status, http.StatusOK)
		c := a
		if rt.name == "analytics-queue-parked-replicas" {
			c = idle
		}
		st, body := c.do(method, rt.path, rt.body)
		require.Equal(t, status, st, "%s %s: %s", method, rt.path, body)
		var v any
		require.NoError(t, json.Unmarshal(body, &v), rt.path)
		v = normalize(v, "", set(rt.volatile), set(rt.series), false)
		if status != http.StatusOK {
			// An answer other than 200 pins its status next to its body.
			v = map[string]any{"status": status, "body": v}
		}
		norm, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		file := filepath.Join(wireDir, rt.name+".json")
		if *update {
			require.NoError(t, os.MkdirAll(wireDir, 0o755))
			require.NoError(t, os.WriteFile(file, append(norm, '\n'), 0o644))
			continue
		}
		want, err := os.ReadFile(file)
		require.NoError(t, err, "%s: golden file missing (go test ./internal/httpapi -run TestWireGolden -update)", rt.path)
		require.JSONEq(t, string(want), string(norm), "%s differs from %s", rt.path, file)
	}
	if !*update {
		// Every golden file belongs to a route of this table: a stale file is a route that went away.
		files, err := filepath.Glob(filepath.Join(wireDir, "*.json"))
		require.NoError(t, err)
		var names []string
		for _, rt := range routes {
			names = append(names, rt.name+".json")
		}
		sort.Strings(names)
		for _, f := range files {
			require.Contains(t, strings.Join(names, " "), filepath.Base(f), "stale golden file %s", f)
		}
	}

	// Every read route of the route table has a row: a GET added later without a golden file fails here.
	mux := http.NewServeMux()
	for _, r := range httpapi.Routes {
		mux.HandleFunc(r.Method+" "+r.Pattern, func(http.ResponseWriter, *http.Request) {})
	}
	pinned := map[string]bool{}
	for _, rt := range routes {
		req, err := http.NewRequest(cmp.Or(rt.method, "GET"), rt.path, nil)
		require.NoError(t, err)
		_, pattern := mux.Handler(req)
		pinned[pattern] = true
	}
	for _, r := range httpapi.Routes {
		key := r.Method + " " + r.Pattern
		if r.Method != "GET" || pinned[key] || wireUnpinned[key] != "" {
			continue
		}
		t.Errorf("read route %s has no golden file: add a row to TestWireGolden", key)
	}
}

// wireUnpinned lists the GET routes TestWireGolden does not pin, with the reason.
var wireUnpinned = map[string]string{
	"GET /api/v1/pop/queue/{queue}":                       "a pop leases messages: it writes, its answer is pinned by the pop tests",
	"GET /api/v1/pop/queue/{queue}/partition/{partition}": "a pop leases messages: it writes, its answer is pinned by the pop tests",
	"GET /api/v1/pop":                                     "a pop leases messages: it writes, its answer is pinned by the pop tests",
	"GET /metrics/prometheus":                             "Prometheus text exposition, not JSON",
}
