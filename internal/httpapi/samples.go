package httpapi

import (
	"net/http"
	"time"
)

// The dashboard's Operations and System pages: each broker's samples joined with the operation
// counters, and PostgreSQL's own statistics.

func (s *Server) handleWorkerMetrics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	rep, err := s.eng.WorkerMetrics(r.Context(), from, to, q.Get("hostname"), q.Get("workerId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) handleSystemMetrics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	rep, err := s.eng.SystemMetrics(r.Context(), from, to, q.Get("hostname"), q.Get("workerId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) handleParkedReplicas(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	rep, err := s.eng.ParkedReplicas(r.Context(), from, to, r.URL.Query().Get("queue"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) handlePostgresStats(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.eng.PostgresStats(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
