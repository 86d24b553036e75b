package httpapi

import "github.com/queen-go/queen/internal/auth"

// access is the level a route is checked against: the route table's, except the metrics routes when
// Options.MetricsAccess raises them (JWT on with METRICS_REQUIRE_AUTH).
func (s *Server) access(rt Route) auth.Access {
	if s.opt.MetricsAccess != "" && (rt.Pattern == "/metrics" || rt.Pattern == "/metrics/prometheus") {
		return s.opt.MetricsAccess
	}
	return rt.Access
}
