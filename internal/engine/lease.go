package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// LeaseResult is the answer for one lease extension.
type LeaseResult struct {
	Index     int     `json:"index"`
	LeaseID   string  `json:"leaseId"`
	Success   bool    `json:"success"`
	Error     *string `json:"error"`
	ExpiresAt *string `json:"expiresAt"`
}

// ExtendLease extends every partition lease held under leaseID to at least now+d; it never shortens a
// lease, and extends all partitions of a multi-partition pop together. ErrNotFound for an unknown id.
func (e *Engine) ExtendLease(ctx context.Context, leaseID uuid.UUID, d time.Duration) ([]LeaseResult, error) {
	rows, err := e.st.ExtendLease(ctx, leaseID, d)
	if err != nil {
		return nil, OpFailed("lease extend", err)
	}
	if len(rows) == 0 {
		return nil, notFound("lease %s not found", leaseID)
	}
	r := LeaseResult{LeaseID: leaseID.String(), Success: true}
	var earliest time.Time
	for _, x := range rows {
		if !x.Live {
			msg := "Lease already expired"
			r.Success, r.Error = false, &msg
			break
		}
		var at time.Time
		if x.ExpiresAt != nil {
			at = *x.ExpiresAt
		}
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
	}
	if r.Success {
		s := ISOMillis(earliest)
		r.ExpiresAt = &s
		e.hub.Postpone(leaseID.String(), earliest) // its expiry announcement, if this broker handed it out
	}
	return []LeaseResult{r}, nil
}
