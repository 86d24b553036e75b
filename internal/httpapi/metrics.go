package httpapi

import (
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// processMetrics is /metrics: the process, the pool and, when metrics are on, request and message totals.
type processMetrics struct {
	Database struct {
		PoolSize        int32 `json:"poolSize"`
		IdleConnections int32 `json:"idleConnections"`
		// AcquireWaitsTotal counts, since the broker started, the connection acquires that found the
		// pool empty and waited (cancelled ones left out): a counter, read as a rate. WaitingRequests,
		// the original's name, carries the same count for its clients; it is not how many wait now.
		AcquireWaitsTotal int32 `json:"acquireWaitsTotal"`
		WaitingRequests   int32 `json:"waitingRequests"`
	} `json:"database"`
	Memory struct {
		RSS          uint64 `json:"rss"`
		HeapTotal    uint64 `json:"heapTotal"`
		HeapUsed     uint64 `json:"heapUsed"`
		External     int    `json:"external"`
		ArrayBuffers int    `json:"arrayBuffers"`
	} `json:"memory"`
	CPU struct {
		User   int `json:"user"`
		System int `json:"system"`
	} `json:"cpu"`
	Goroutines int `json:"goroutines"`
	Parked     int `json:"parked"`
	// The totals are there together, or not at all when request metrics are off (a nil embedded
	// pointer adds no fields).
	*processTotals
}

type processTotals struct {
	Uptime   int64     `json:"uptime"`
	Requests totalRate `json:"requests"`
	Messages totalRate `json:"messages"`
}

type totalRate struct {
	Total int64   `json:"total"`
	Rate  float64 `json:"rate"`
}

func (s *Server) handleMetricsJSON(q request) (processMetrics, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var body processMetrics
	body.Database.PoolSize, body.Database.IdleConnections, body.Database.AcquireWaitsTotal = s.eng.PoolStats()
	body.Database.WaitingRequests = body.Database.AcquireWaitsTotal
	body.Memory.RSS, body.Memory.HeapTotal, body.Memory.HeapUsed = ms.Sys, ms.HeapSys, ms.HeapAlloc
	body.Goroutines, body.Parked = runtime.NumGoroutine(), s.eng.Parked()
	if m := s.opt.Metrics; m != nil {
		t := m.Totals()
		up := t.Uptime.Seconds()
		body.processTotals = &processTotals{Uptime: int64(up),
			Requests: totalRate{Total: t.Requests, Rate: float64(t.Requests) / max(up, 1)},
			Messages: totalRate{Total: t.Messages, Rate: float64(t.Messages) / max(up, 1)}}
	}
	return body, nil
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
