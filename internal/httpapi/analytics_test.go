package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDashboardAnalytics checks the series behind the Operations and System pages against what the
// broker did: pushes and pops counted per bucket, one sampled broker, a parked long-poll per queue,
// PostgreSQL figures for the broker's own tables, and the documented 501 of the migration routes.
func TestDashboardAnalytics(t *testing.T) {
	t.Parallel()
	a := setup(t, map[string]string{"STATS_INTERVAL_MS": "200"}).raw
	a.json("POST", "/api/v1/push", `{"items":[{"queue":"an-a","payload":{"n":1}},{"queue":"an-a","payload":{"n":2}},{"queue":"an-b","payload":{"n":3}}]}`, http.StatusCreated, nil)
	a.json("GET", "/api/v1/pop/queue/an-a?batch=5&autoAck=true", "", http.StatusOK, nil)

	// A long-poll parked on an empty queue while the sampler runs.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_, _ = a.exchange(ctx, "GET", "/api/v1/pop/queue/an-idle?wait=true&timeout=30000", nil)
	}()

	type workerMetrics struct {
		TimeRange     struct{ From, To string } `json:"timeRange"`
		BucketMinutes int                       `json:"bucketMinutes"`
		TimeSeries    []map[string]any          `json:"timeSeries"`
		Workers       []map[string]any          `json:"workers"`
		Queues        []struct {
			QueueName string `json:"queueName"`
			PopCount  int    `json:"popCount"`
		} `json:"queues"`
		Summary map[string]float64 `json:"summary"`
	}
	var wm workerMetrics
	var parked struct {
		Series []struct {
			QueueName   string `json:"queueName"`
			WorkerID    string `json:"workerId"`
			ParkedCount int    `json:"parkedCount"`
		} `json:"series"`
		Replicas []map[string]string `json:"replicas"`
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		wm = workerMetrics{}
		parked.Series = nil
		if a.getJSON(c, "/api/v1/analytics/worker-metrics", &wm) && a.getJSON(c, "/api/v1/analytics/queue-parked-replicas?queue=an-idle", &parked) {
			assert.True(c, wm.Summary["totalPushMessages"] == 3 && wm.Summary["totalPopMessages"] == 2 && len(wm.Workers) == 1 && len(parked.Series) > 0,
				"series did not catch up: %+v %+v", wm.Summary, parked)
		}
	}, 20*time.Second, 100*time.Millisecond)
	require.Equal(t, 1, wm.BucketMinutes)
	require.NotEmpty(t, wm.TimeRange.From)
	require.NotEmpty(t, wm.TimeRange.To)
	require.NotEmpty(t, wm.TimeSeries)
	for _, k := range []string{"timestamp", "pushMessages", "popMessages", "ackMessages", "pushPerSecond", "avgEventLoopLagMs",
		"maxEventLoopLagMs", "avgFreeSlots", "minFreeSlots", "dbConnections", "avgLagMs", "maxLagMs", "dlqCount"} {
		require.Contains(t, wm.TimeSeries[len(wm.TimeSeries)-1], k)
	}
	require.Contains(t, wm.Queues, struct {
		QueueName string `json:"queueName"`
		PopCount  int    `json:"popCount"`
	}{"an-a", 2})
	w := wm.Workers[0]
	require.NotEmpty(t, w["workerId"])
	require.NotEmpty(t, w["hostname"])
	require.Positive(t, w["dbConnections"])
	require.Equal(t, "an-idle", parked.Series[0].QueueName)
	require.Equal(t, 1, parked.Series[0].ParkedCount)
	require.Equal(t, []map[string]string{{"hostname": w["hostname"].(string), "workerId": w["workerId"].(string)}}, parked.Replicas)

	var sm struct {
		ReplicaCount int `json:"replicaCount"`
		Replicas     []struct {
			Hostname   string `json:"hostname"`
			TimeSeries []struct {
				SampleCount int                                      `json:"sampleCount"`
				Metrics     map[string]map[string]map[string]float64 `json:"metrics"`
			} `json:"timeSeries"`
		} `json:"replicas"`
	}
	a.json("GET", "/api/v1/analytics/system-metrics", "", http.StatusOK, &sm)
	require.Equal(t, 1, sm.ReplicaCount)
	last := sm.Replicas[0].TimeSeries[len(sm.Replicas[0].TimeSeries)-1]
	require.Positive(t, last.SampleCount)
	require.Positive(t, last.Metrics["memory"]["rss_mb"]["last"])
	require.Positive(t, last.Metrics["database"]["pool_size"]["max"])
	require.Positive(t, last.Metrics["threadpool"]["goroutines"]["min"])
	for _, k := range []string{"avg", "min", "max", "last"} {
		require.Contains(t, last.Metrics["cpu"]["user_pct"], k)
	}
	// A range before the broker existed has no samples.
	old := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
	sm.Replicas = nil
	a.json("GET", "/api/v1/analytics/system-metrics?from="+old+"&to="+old, "", http.StatusOK, &sm)
	require.Empty(t, sm.Replicas)
	var bad map[string]string
	a.json("GET", "/api/v1/analytics/worker-metrics?from=yesterday", "", http.StatusBadRequest, &bad)
	require.Equal(t, "from must be an RFC 3339 timestamp", bad["error"])

	var pg struct {
		Database struct {
			CacheHitRatio *float64 `json:"cacheHitRatio"`
			Version       string   `json:"version"`
		} `json:"database"`
		TableSizes []struct {
			Table      string `json:"table"`
			TotalBytes int64  `json:"totalBytes"`
		} `json:"tableSizes"`
		DeadTuples    []map[string]any `json:"deadTuples"`
		ActiveQueries []map[string]any `json:"activeQueries"`
		BufferConfig  map[string]string
	}
	a.json("GET", "/api/v1/analytics/postgres-stats", "", http.StatusOK, &pg)
	require.NotEmpty(t, pg.Database.Version)
	tables := map[string]bool{}
	for _, tb := range pg.TableSizes {
		tables[tb.Table] = tb.TotalBytes > 0
	}
	require.True(t, tables["messages"], "the broker's own tables are listed: %v", tables)
	require.Contains(t, tables, "broker_samples")
	require.NotEmpty(t, pg.DeadTuples)

	for _, r := range []struct{ method, path string }{{"POST", "/api/v1/migration/test-connection"}, {"POST", "/api/v1/migration/start"},
		{"GET", "/api/v1/migration/status"}, {"POST", "/api/v1/migration/validate"}, {"POST", "/api/v1/migration/reset"}} {
		var e map[string]string
		a.json(r.method, r.path, `{}`, http.StatusNotImplemented, &e)
		require.Equal(t, "not_implemented", e["code"])
		require.Contains(t, e["error"], "pg_dump")
	}
}
