package httpapi

import (
	"encoding/json"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handlePushMaintenance(q request) (engine.MaintenanceStatus, error) {
	return s.eng.MaintenanceStatus(q.Context()), nil
}

func (s *Server) handlePushMaintenanceSwitch(q request) (engine.MaintenanceSwitched, error) {
	on, err := maintenanceSwitch(q)
	if err != nil {
		return engine.MaintenanceSwitched{}, err
	}
	return s.eng.SwitchMaintenance(q.Context(), on)
}

func (s *Server) handlePopMaintenance(q request) (engine.PopMaintenanceStatus, error) {
	return s.eng.PopMaintenanceStatus(q.Context()), nil
}

func (s *Server) handlePopMaintenanceSwitch(q request) (engine.PopMaintenanceStatus, error) {
	on, err := maintenanceSwitch(q)
	if err != nil {
		return engine.PopMaintenanceStatus{}, err
	}
	return s.eng.SwitchPopMaintenance(q.Context(), on)
}

// maintenanceSwitch reads the {"enabled":bool} body both switches take; a missing or non-boolean
// enabled gets the contract's one text.
func maintenanceSwitch(q request) (bool, error) {
	var body struct {
		Enabled json.RawMessage `json:"enabled"`
	}
	if err := q.decode(&body); err != nil {
		return false, err
	}
	var on bool
	if !present(body.Enabled) || json.Unmarshal(body.Enabled, &on) != nil {
		return false, badRequest("enabled (boolean) is required")
	}
	return on, nil
}
