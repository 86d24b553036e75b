package httpapi

import (
	"net/http"
	"time"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	qf := r.URL.Query()
	rep, err := s.eng.Status(r.Context(), engine.StatusFilter{From: from, To: to, Queue: qf.Get("queue"),
		Namespace: qf.Get("namespace"), Task: qf.Get("task")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) handleStatusBuffers(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.eng.Buffers(r.Context()))
	return nil
}

func (s *Server) handleOverview(w http.ResponseWriter, r *http.Request) error {
	o, err := s.eng.Overview(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}
