package httpapi

import (
	"encoding/json"
	"net/http"
)

func (s *Server) handlePushMaintenance(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusOK, s.eng.MaintenanceStatus(r.Context()))
		return nil
	}
	on, err := s.maintenanceSwitch(w, r)
	if err != nil {
		return err
	}
	v, err := s.eng.SwitchMaintenance(r.Context(), on)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handlePopMaintenance(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusOK, s.eng.PopMaintenanceStatus(r.Context()))
		return nil
	}
	on, err := s.maintenanceSwitch(w, r)
	if err != nil {
		return err
	}
	v, err := s.eng.SwitchPopMaintenance(r.Context(), on)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// maintenanceSwitch reads the {"enabled":bool} body both switches take; a missing or non-boolean
// enabled gets the contract's one text.
func (s *Server) maintenanceSwitch(w http.ResponseWriter, r *http.Request) (bool, error) {
	var body struct {
		Enabled json.RawMessage `json:"enabled"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return false, err
	}
	var on bool
	if !present(body.Enabled) || json.Unmarshal(body.Enabled, &on) != nil {
		return false, badRequest("enabled (boolean) is required")
	}
	return on, nil
}
