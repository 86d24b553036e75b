package httpapi

import (
	"fmt"
	"net/http"
	"time"
)

func (s *Server) handleLeaseExtend(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "leaseId", fmt.Sprintf("lease %q not found", r.PathValue("leaseId")))
	if err != nil {
		return err
	}
	var body struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := decodeBody(w, r, s.opt.MaxBodyBytes, &body); err != nil {
		return err
	}
	secs := 60.0
	if body.Seconds != nil {
		secs = *body.Seconds
	}
	if secs <= 0 || secs > 86400 {
		return badRequest("seconds must be between 1 and 86400")
	}
	res, err := s.eng.ExtendLease(r.Context(), id, time.Duration(secs*float64(time.Second)))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
