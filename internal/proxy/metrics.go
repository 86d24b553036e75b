package proxy

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the proxy's Prometheus collectors, registered on the registry main passes in.
type Metrics struct {
	// Decisions counts every tenant request by cluster and outcome: "forwarded" or the error code.
	Decisions *prometheus.CounterVec
	// RateLimited counts limiter denials by cluster, limiter and mode (enforce: answered 429; shadow:
	// forwarded anyway).
	RateLimited *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queen_proxy_decisions_total",
			Help: "Tenant requests by cluster and decision (forwarded, or the error code returned).",
		}, []string{"cluster", "code"}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queen_proxy_rate_limited_total",
			Help: "Rate-limit denials by cluster, limiter and mode (shadow denials are forwarded).",
		}, []string{"cluster", "limiter", "mode"}),
	}
	for _, c := range []prometheus.Collector{m.Decisions, m.RateLimited} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
