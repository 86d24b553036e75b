package httpapi

import (
	"context"

	"github.com/queen-go/queen/internal/engine"
)

// The dashboard's Operations and System pages: each broker's samples joined with the operation
// counters, and PostgreSQL's own statistics. The series run through series (handler.go).

func (s *Server) handleWorkerMetrics(ctx context.Context, f readFilter) (*engine.WorkerMetricsReport, error) {
	return s.eng.WorkerMetrics(ctx, f.From, f.To, f.Hostname, f.WorkerID)
}

func (s *Server) handleSystemMetrics(ctx context.Context, f readFilter) (*engine.SystemMetricsReport, error) {
	return s.eng.SystemMetrics(ctx, f.From, f.To, f.Hostname, f.WorkerID)
}

func (s *Server) handleParkedReplicas(ctx context.Context, f readFilter) (*engine.ParkedReport, error) {
	return s.eng.ParkedReplicas(ctx, f.From, f.To, f.Queue)
}

func (s *Server) handlePostgresStats(q request) (*engine.PostgresStatsReport, error) {
	return s.eng.PostgresStats(q.Context())
}
