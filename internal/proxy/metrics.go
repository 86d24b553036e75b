package proxy

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the proxy's Prometheus collectors, registered on the registry main passes in.
type Metrics struct {
	// Decisions counts every tenant request by cluster and outcome: "forwarded" or the error code.
	Decisions *prometheus.CounterVec
	// RateLimited counts limiter denials by cluster, limiter and mode (enforce: answered 429; shadow:
	// forwarded anyway).
	RateLimited *prometheus.CounterVec
	// OpenConnections is the client connections open on this instance; ClusterConnections those counted
	// against each cluster; ConnectionLimit the caps by scope (global, cluster); ConnectionsRefused the
	// connections or requests refused by a cap, by scope.
	OpenConnections    prometheus.Gauge
	ClusterConnections *prometheus.GaugeVec
	ConnectionLimit    *prometheus.GaugeVec
	ConnectionsRefused *prometheus.CounterVec
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
		OpenConnections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "queen_proxy_open_connections",
			Help: "Client connections open on this instance (capped by QUEEN_PROXY_MAX_CONNS).",
		}),
		ClusterConnections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "queen_proxy_cluster_open_connections",
			Help: "Open client connections counted against each cluster (capped by QUEEN_PROXY_MAX_CONNS_PER_CLUSTER).",
		}, []string{"cluster"}),
		ConnectionLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "queen_proxy_connection_limit",
			Help: "The open-connection caps of this instance by scope (global, cluster).",
		}, []string{"scope"}),
		ConnectionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queen_proxy_connections_refused_total",
			Help: "Connections refused by the open-connection caps, by scope (global, cluster).",
		}, []string{"scope"}),
	}
	for _, c := range []prometheus.Collector{m.Decisions, m.RateLimited, m.OpenConnections, m.ClusterConnections,
		m.ConnectionLimit, m.ConnectionsRefused} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
