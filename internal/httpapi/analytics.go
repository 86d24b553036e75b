package httpapi

import (
	"context"

	"github.com/queen-go/queen/internal/views"
)

// The analytics series. Each runs through series (handler.go), which reads the window and the filters.

func (s *Server) handleStatusAnalytics(ctx context.Context, f readFilter) (*views.IngestReport, error) {
	return s.views.Ingest(ctx, f.From, f.To, f.Queue, f.Interval)
}

func (s *Server) handleQueueLag(ctx context.Context, f readFilter) ([]views.LagPoint, error) {
	return s.views.QueueLag(ctx, f.From, f.To, f.Queue)
}

func (s *Server) handleQueueOps(ctx context.Context, f readFilter) (*views.QueueOpsReport, error) {
	return s.views.QueueOps(ctx, f.From, f.To, f.Queue)
}

func (s *Server) handleRetentionAnalytics(ctx context.Context, f readFilter) (*views.RetentionReport, error) {
	return s.views.Retention(ctx, f.From, f.To)
}
