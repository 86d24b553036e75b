package httpapi

import (
	"net/http"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handlePushMaintenance(w http.ResponseWriter, r *http.Request) error {
	return s.maintenance(w, r, false)
}

func (s *Server) handlePopMaintenance(w http.ResponseWriter, r *http.Request) error {
	return s.maintenance(w, r, true)
}

// maintenance reads, and on POST switches, the push or the pop maintenance flag.
func (s *Server) maintenance(w http.ResponseWriter, r *http.Request, pop bool) error {
	if r.Method == http.MethodPost {
		var body struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
			return err
		}
		if body.Enabled == nil {
			return badRequest("enabled (boolean) is required")
		}
		key := engine.MaintenancePush
		if pop {
			key = engine.MaintenancePop
		}
		if err := s.eng.SetMaintenance(r.Context(), key, *body.Enabled); err != nil {
			return err
		}
	}
	push, popOn := s.eng.Maintenance(r.Context())
	pending, failed, healthy := s.eng.SpoolStats()
	if pop {
		writeJSON(w, http.StatusOK, map[string]any{"popMaintenanceMode": popOn})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"maintenanceMode": push, "bufferedMessages": pending,
		"failedReplays": failed, "dbHealthy": healthy})
	return nil
}
