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

// Access is what GET /api/v1/access answers: the levels the caller's token passes. Clients (the
// dashboard) read it to offer only the actions that can succeed instead of buttons that answer 403.
type Access struct {
	AuthEnabled bool `json:"authEnabled"`
	Produce     bool `json:"produce"`
	Consume     bool `json:"consume"`
	Read        bool `json:"read"`
	Admin       bool `json:"admin"`
}

func (s *Server) handleAccess(r request) (Access, error) {
	if s.opt.Auth == nil {
		return Access{Produce: true, Consume: true, Read: true, Admin: true}, nil
	}
	passes := func(level auth.Access) bool {
		_, err := s.opt.Auth.Authorize(r.Request, level)
		return err == nil
	}
	return Access{AuthEnabled: true, Produce: passes(Produce), Consume: passes(Consume), Read: passes(Read), Admin: passes(Admin)}, nil
}
