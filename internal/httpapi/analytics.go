package httpapi

import (
	"net/http"
	"time"
)

func (s *Server) handleStatusAnalytics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, 24*time.Hour)
	if err != nil {
		return err
	}
	rep, err := s.eng.Ingest(r.Context(), from, to, r.URL.Query().Get("queue"), r.URL.Query().Get("interval"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) handleQueueLag(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	pts, err := s.eng.QueueLag(r.Context(), from, to, r.URL.Query().Get("queue"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pts)
	return nil
}

func (s *Server) handleQueueOps(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, time.Hour)
	if err != nil {
		return err
	}
	rep, err := s.eng.QueueOps(r.Context(), from, to, r.URL.Query().Get("queue"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) handleRetentionAnalytics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := timeRange(r, 24*time.Hour)
	if err != nil {
		return err
	}
	rep, err := s.eng.Retention(r.Context(), from, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}
