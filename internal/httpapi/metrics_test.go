package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrometheus parses /metrics/prometheus with the text parser and looks for every family.
func TestPrometheus(t *testing.T) {
	t.Parallel()
	rb := setup(t, map[string]string{"STATS_INTERVAL_MS": "50"}).rb
	a := newAPI(t, rb.URL)
	a.push(pushItem{Queue: "prom", Payload: 1}, pushItem{Queue: "prom", Payload: 2})
	m := a.pop("/api/v1/pop/queue/prom?batch=1")
	a.ackAll("", m.Messages, "completed")

	var fams map[string]*ioprom
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(rb.URL + "/metrics/prometheus")
		if !assert.NoError(c, err) {
			return
		}
		defer resp.Body.Close()
		if !assert.Equal(c, http.StatusOK, resp.StatusCode) {
			return
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fs, err := p.TextToMetricFamilies(resp.Body)
		if !assert.NoError(c, err) {
			return
		}
		fams = map[string]*ioprom{}
		for name, f := range fs {
			fams[name] = &ioprom{n: len(f.GetMetric())}
			for _, mm := range f.GetMetric() {
				for _, l := range mm.GetLabel() {
					if l.GetName() == "queue" && l.GetValue() == "prom" {
						fams[name].prom = true
						if mm.GetGauge() != nil {
							fams[name].gauge = mm.GetGauge().GetValue()
						}
					}
				}
			}
		}
		f := fams["queen_queue_pending_messages"]
		assert.True(c, f != nil && f.prom && f.gauge == 1, "queue depth gauge not there yet: %+v", f)
	}, 10*time.Second, 10*time.Millisecond)
	for _, name := range []string{"queen_http_requests_total", "queen_http_request_duration_seconds",
		"queen_queue_pushed_messages_total", "queen_queue_popped_messages_total", "queen_queue_acked_messages_total",
		"queen_queue_pending_messages", "queen_queue_processing_messages", "queen_queue_lag_seconds", "queen_dlq_depth_messages",
		"queen_db_pool_connections", "queen_db_pool_acquire_waits_total", "queen_spool_pending_messages", "queen_spool_failed_messages",
		"queen_maintenance_mode_enabled", "queen_uptime_seconds", "go_goroutines", "process_cpu_seconds_total"} {
		require.Contains(t, fams, name)
	}
	for _, name := range []string{"queen_queue_pushed_messages_total", "queen_queue_popped_messages_total", "queen_queue_acked_messages_total"} {
		require.True(t, fams[name].prom, name)
	}

	var js map[string]any
	a.json("GET", "/metrics", nil, http.StatusOK, &js)
	require.Contains(t, js, "database")
	require.Greater(t, js["requests"].(map[string]any)["total"].(float64), float64(0))
}

type ioprom struct {
	n     int
	prom  bool
	gauge float64
}
