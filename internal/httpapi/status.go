package httpapi

import (
	"context"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleStatus(ctx context.Context, f readFilter) (*engine.StatusReport, error) {
	return s.eng.Status(ctx, engine.StatusFilter{From: f.From, To: f.To, Queue: f.Queue, Namespace: f.Namespace, Task: f.Task})
}

func (s *Server) handleStatusBuffers(q request) (engine.BufferStatus, error) {
	return s.eng.Buffers(q.Context()), nil
}

func (s *Server) handleOverview(q request) (*engine.Overview, error) {
	return s.eng.Overview(q.Context())
}
