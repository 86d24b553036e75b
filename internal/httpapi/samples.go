package httpapi

import (
	"context"

	"github.com/queen-go/queen/internal/views"
)

// The dashboard's Operations and System pages: each broker's samples joined with the operation
// counters, and PostgreSQL's own statistics. The series run through series (handler.go).

func (s *Server) handleWorkerMetrics(ctx context.Context, f readFilter) (*views.WorkerMetricsReport, error) {
	return s.views.WorkerMetrics(ctx, f.From, f.To, f.Hostname, f.WorkerID)
}

func (s *Server) handleSystemMetrics(ctx context.Context, f readFilter) (*views.SystemMetricsReport, error) {
	return s.views.SystemMetrics(ctx, f.From, f.To, f.Hostname, f.WorkerID)
}

func (s *Server) handleParkedReplicas(ctx context.Context, f readFilter) (*views.ParkedReport, error) {
	return s.views.ParkedReplicas(ctx, f.From, f.To, f.Queue)
}

func (s *Server) handlePostgresStats(q request) (*views.PostgresStatsReport, error) {
	return s.views.PostgresStats(q.Context())
}
