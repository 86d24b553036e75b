package httpapi

import (
	"context"

	"github.com/queen-go/queen/internal/engine"
)

// The analytics series. Each runs through series (handler.go), which reads the window and the filters.

func (s *Server) handleStatusAnalytics(ctx context.Context, f readFilter) (*engine.IngestReport, error) {
	return s.eng.Ingest(ctx, f.From, f.To, f.Queue, f.Interval)
}

func (s *Server) handleQueueLag(ctx context.Context, f readFilter) ([]engine.LagPoint, error) {
	return s.eng.QueueLag(ctx, f.From, f.To, f.Queue)
}

func (s *Server) handleQueueOps(ctx context.Context, f readFilter) (*engine.QueueOpsReport, error) {
	return s.eng.QueueOps(ctx, f.From, f.To, f.Queue)
}

func (s *Server) handleRetentionAnalytics(ctx context.Context, f readFilter) (*engine.RetentionReport, error) {
	return s.eng.Retention(ctx, f.From, f.To)
}
