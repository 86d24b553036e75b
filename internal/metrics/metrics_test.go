package metrics_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/metrics"
)

// series gathers reg and lists "family{label=value,...} value" of the queen_ families, sorted.
func series(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	var out []string
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "queen_http_request") && !strings.HasPrefix(f.GetName(), "queen_queue_p") &&
			!strings.HasPrefix(f.GetName(), "queen_queue_acked") {
			continue
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			var v float64
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			}
			out = append(out, f.GetName()+"{"+strings.Join(ls, ",")+"} "+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	sort.Strings(out)
	return out
}

// TestObserverSeries: the children kept per request label set and per queue label give the series
// WithLabelValues gave: each made on its first use only, repeated calls adding up, queues past the cap
// under OverflowQueue.
func TestObserverSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Sources{})
	m.LimitQueues(2)

	for range 3 {
		m.ObserveRequest("POST /api/v1/push", "POST", 201, time.Millisecond)
	}
	m.ObserveRequest("POST /api/v1/push", "POST", 400, time.Millisecond)
	m.ObserveRequest("", "GET", 404, time.Millisecond)
	m.Pushed("a", 5)
	m.Pushed("a", 2)
	m.Popped("b", 2, []float64{0.01, 0.02})
	m.Acked("b", "completed", 1)
	m.Acked("b", "completed", 1)
	m.Acked("b", "failed", 1)
	m.Pushed("c", 1) // past the cap of 2 queues
	m.Pushed("d", 1)
	m.Acked("d", "completed", 3)

	require.Equal(t, []string{
		"queen_http_request_duration_seconds{method=GET,route=unmatched} 1",
		"queen_http_request_duration_seconds{method=POST,route=POST /api/v1/push} 4",
		"queen_http_requests_total{code=201,method=POST,route=POST /api/v1/push} 3",
		"queen_http_requests_total{code=400,method=POST,route=POST /api/v1/push} 1",
		"queen_http_requests_total{code=404,method=GET,route=unmatched} 1",
		"queen_queue_acked_messages_total{queue=__overflow__,status=completed} 3",
		"queen_queue_acked_messages_total{queue=b,status=completed} 2",
		"queen_queue_acked_messages_total{queue=b,status=failed} 1",
		"queen_queue_pop_lag_seconds{queue=b} 2",
		"queen_queue_popped_messages_total{queue=b} 2",
		"queen_queue_pushed_messages_total{queue=__overflow__} 2",
		"queen_queue_pushed_messages_total{queue=a} 7",
	}, series(t, reg))
	require.Equal(t, int64(5), m.Totals().Requests)
	require.Equal(t, int64(9), m.Totals().Messages)
}
