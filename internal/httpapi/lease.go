package httpapi

import (
	"fmt"
	"time"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleLeaseExtend(q request) ([]engine.LeaseResult, error) {
	id, err := pathUUID(q.Request, "leaseId", fmt.Sprintf("lease %q not found", q.PathValue("leaseId")))
	if err != nil {
		return nil, err
	}
	var body struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	secs := 60.0
	if body.Seconds != nil {
		secs = *body.Seconds
	}
	if secs <= 0 || secs > 86400 {
		return nil, badRequest("seconds must be between 1 and 86400")
	}
	return s.eng.ExtendLease(q.Context(), id, time.Duration(secs*float64(time.Second)))
}
