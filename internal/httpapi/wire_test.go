package httpapi_test

import (
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

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/wire from the broker's answers")

// wireDir holds the golden JSON of every read route: the wire contract the SDK reads.
var wireDir = filepath.Join("..", "..", "testdata", "wire")

var (
	uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timeRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
)

// normalize replaces what differs from run to run (ids, instants, measured numbers) by placeholders,
// so that the golden file pins the shape, the keys, the types and every value that is deterministic.
// Under a key in volatile a number becomes "<number>"; under a key in series an array keeps only its
// first element, with every number in it replaced.
func normalize(v any, key string, volatile, series map[string]bool, inSeries bool) any {
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
		case uuidRe.MatchString(x):
			return "<uuid>"
		case timeRe.MatchString(x):
			return "<time>"
		}
		return x
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
	// The listings read rolled-up statistics and the analytics read flushed counters: wait for both.
	eventually(t, 20*time.Second, func() error {
		var qs struct {
			Queues []struct {
				Messages struct{ Total, Pending, Processing int } `json:"messages"`
			} `json:"queues"`
		}
		a.json("GET", "/api/v1/resources/queues", nil, http.StatusOK, &qs)
		// A rollup taken between the pushes and the last pop shows the same total with the leased
		// message still pending: wait for one taken after the lease.
		if len(qs.Queues) != 1 || qs.Queues[0].Messages.Total != 3 || qs.Queues[0].Messages.Processing != 1 {
			return errorf("stats not rolled up yet: %+v", qs)
		}
		var ops struct {
			Series []struct{ PushMessages, PopMessages, AckSuccess, DLQ int }
		}
		a.json("GET", "/api/v1/analytics/queue-ops?queue=wire-q", nil, http.StatusOK, &ops)
		var push, pop, ok, dlq int
		for _, p := range ops.Series {
			push, pop, ok, dlq = push+p.PushMessages, pop+p.PopMessages, ok+p.AckSuccess, dlq+p.DLQ
		}
		if push != 3 || pop != 3 || ok != 1 || dlq != 1 {
			return errorf("operation counters not flushed yet: push=%d pop=%d ok=%d dlq=%d", push, pop, ok, dlq)
		}
		return nil
	})

	metricsKeys := []string{"uptime", "rate", "total", "cpu", "user", "system", "rss", "heapUsed", "heapTotal", "external",
		"arrayBuffers", "goroutines", "parked", "poolSize", "idleConnections", "waitingRequests"}
	lag := []string{"avg", "max", "median", "min", "statsAge"}
	routes := []struct {
		name, path string
		volatile   []string // keys whose numbers are measured, not set by the data set
		series     []string // keys whose arrays are time series: one element pinned, its numbers replaced
	}{
		{"health", "/health", nil, nil},
		{"resources-queues", "/api/v1/resources/queues", []string{"statsAge"}, nil},
		{"resources-queue", "/api/v1/resources/queues/wire-q", nil, nil},
		{"resources-namespaces", "/api/v1/resources/namespaces", nil, nil},
		{"resources-tasks", "/api/v1/resources/tasks", nil, nil},
		{"resources-overview", "/api/v1/resources/overview", lag, nil},
		{"status-queues", "/api/v1/status/queues", []string{"statsAge"}, nil},
		{"status-queue", "/api/v1/status/queues/wire-q", nil, nil},
		{"status-queue-messages", "/api/v1/status/queues/wire-q/messages", nil, nil},
		{"messages", "/api/v1/messages?queue=wire-q", nil, nil},
		{"messages-group", "/api/v1/messages?queue=wire-q&consumerGroup=wire-g", nil, nil},
		{"message", "/api/v1/messages/" + p1 + "/w1", nil, nil},
		{"message-dead", "/api/v1/messages/" + p1 + "/w2", nil, nil},
		{"dlq", "/api/v1/dlq?queue=wire-q", nil, nil},
		{"dlq-item", "/api/v1/dlq/" + p1 + "/w2?consumerGroup=wire-g", nil, nil},
		{"consumer-groups", "/api/v1/consumer-groups", []string{"maxTimeLag"}, nil},
		{"consumer-groups-lagging", "/api/v1/consumer-groups/lagging?minLagSeconds=0", []string{"lag_hours", "time_lag_seconds"}, nil},
		{"consumer-group", "/api/v1/consumer-groups/wire-g", []string{"timeLagSeconds"}, nil},
		{"trace-names", "/api/v1/traces/names", nil, nil},
		{"traces-by-name", "/api/v1/traces/by-name/wire-trace", nil, nil},
		{"traces", "/api/v1/traces/" + p1 + "/w1", nil, nil},
		{"status", "/api/v1/status", []string{"statsAge"}, []string{"throughput"}},
		{"status-buffers", "/api/v1/status/buffers", nil, nil},
		{"status-analytics", "/api/v1/status/analytics", nil, []string{"dataPoints"}},
		{"analytics-queue-lag", "/api/v1/analytics/queue-lag", nil, []string{""}},
		{"analytics-queue-ops", "/api/v1/analytics/queue-ops?queue=wire-q", nil, []string{"series"}},
		{"analytics-retention", "/api/v1/analytics/retention", nil, []string{"series"}},
		{"metrics", "/metrics", metricsKeys, nil},
		{"system-maintenance", "/api/v1/system/maintenance", nil, nil},
		{"system-maintenance-pop", "/api/v1/system/maintenance/pop", nil, nil},
	}
	set := func(keys []string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	for _, rt := range routes {
		st, body := a.do("GET", rt.path, nil)
		require.Equal(t, http.StatusOK, st, "%s: %s", rt.path, body)
		var v any
		require.NoError(t, json.Unmarshal(body, &v), rt.path)
		norm, err := json.MarshalIndent(normalize(v, "", set(rt.volatile), set(rt.series), false), "", "  ")
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
}
