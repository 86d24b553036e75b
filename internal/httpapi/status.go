package httpapi

import (
	"context"

	"github.com/queen-go/queen/internal/views"
)

func (s *Server) handleStatus(ctx context.Context, f readFilter) (*views.StatusReport, error) {
	return s.views.Status(ctx, views.StatusFilter{From: f.From, To: f.To, Queue: f.Queue, Namespace: f.Namespace, Task: f.Task})
}

func (s *Server) handleStatusBuffers(q request) (views.BufferStatus, error) {
	return s.views.Buffers(q.Context()), nil
}

func (s *Server) handleOverview(q request) (*views.Overview, error) {
	return s.views.Overview(q.Context())
}
