package engine

import (
	"context"
	"sync"
	"time"
)

// maintenanceState caches the shared maintenance flags of system_state for a moment, so that a push
// does not cost a read of them, while a change on any broker is seen everywhere within maintenanceTTL.
type maintenanceState struct {
	mu       sync.Mutex // protects the fields below
	push     bool
	pop      bool
	loadedAt time.Time
}

const maintenanceTTL = 500 * time.Millisecond

// Maintenance flag keys in system_state.
const (
	MaintenancePush = "maintenance_mode"
	MaintenancePop  = "pop_maintenance_mode"
)

// Maintenance reports the push and pop maintenance flags shared by every broker on the database. When
// the database cannot be read, the last known values stand.
func (e *Engine) Maintenance(ctx context.Context) (push, pop bool) {
	m := &e.maint
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.loadedAt) < maintenanceTTL {
		return m.push, m.pop
	}
	if e.dbDown.Load() && !m.loadedAt.IsZero() {
		return m.push, m.pop // do not spend a connect timeout on every push during an outage
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if flags, err := e.st.States(rctx, MaintenancePush, MaintenancePop); err == nil {
		m.push, m.pop = flags[MaintenancePush], flags[MaintenancePop]
	}
	m.loadedAt = time.Now()
	return m.push, m.pop
}

// SetMaintenance switches one maintenance flag for every broker on the database.
func (e *Engine) SetMaintenance(ctx context.Context, key string, on bool) error {
	if err := e.st.SetState(ctx, key, on); err != nil {
		return opErr("maintenance", err)
	}
	e.maint.mu.Lock()
	e.maint.loadedAt = time.Time{}
	e.maint.mu.Unlock()
	if !on {
		signal(e.replayKick)
	}
	return nil
}
