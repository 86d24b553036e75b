package httpapi

import (
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func (s *Server) handleMetricsJSON(w http.ResponseWriter, r *http.Request) error {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total, idle, waiting := s.eng.PoolStats()
	body := map[string]any{
		"database": map[string]any{"poolSize": total, "idleConnections": idle, "waitingRequests": waiting},
		"memory": map[string]any{"rss": ms.Sys, "heapTotal": ms.HeapSys, "heapUsed": ms.HeapAlloc, "external": 0,
			"arrayBuffers": 0},
		"cpu": map[string]any{"user": 0, "system": 0}, "goroutines": runtime.NumGoroutine(), "parked": s.eng.Parked(),
	}
	if m := s.opt.Metrics; m != nil {
		t := m.Totals()
		up := t.Uptime.Seconds()
		body["uptime"] = int64(up)
		body["requests"] = map[string]any{"total": t.Requests, "rate": float64(t.Requests) / max(up, 1)}
		body["messages"] = map[string]any{"total": t.Messages, "rate": float64(t.Messages) / max(up, 1)}
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) handleMetricsPrometheus(w http.ResponseWriter, r *http.Request) error {
	if s.opt.Gatherer == nil {
		return notFound("metrics are not enabled")
	}
	w.Header().Set("Cache-Control", "no-cache")
	promhttp.HandlerFor(s.opt.Gatherer, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// observeRequest records one answered request under its route pattern (set by the mux).
func (s *Server) observeRequest(r *http.Request, status int, d time.Duration) {
	if s.opt.Metrics == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	s.opt.Metrics.ObserveRequest(r.Pattern, r.Method, status, d)
}
