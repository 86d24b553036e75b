package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
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
		return OpFailed("maintenance", err)
	}
	e.maint.mu.Lock()
	e.maint.loadedAt = time.Time{}
	e.maint.mu.Unlock()
	if !on {
		signal(e.replayKick)
	}
	return nil
}

// The answers of the maintenance routes (contract §8.4). The contract's buffer numbers describe a file
// buffer with "failed files"; ours is the disk spool plus the dead-spool file, mapped as written in
// docs/decisions.md ("Maintenance answers").

// MaintenanceStatus answers GET /api/v1/system/maintenance.
type MaintenanceStatus struct {
	MaintenanceMode    bool        `json:"maintenanceMode"`
	PopMaintenanceMode bool        `json:"popMaintenanceMode"`
	BufferedMessages   int64       `json:"bufferedMessages"`
	BufferHealthy      bool        `json:"bufferHealthy"`
	BufferStats        BufferStats `json:"bufferStats"`
	// FailedReplays is beyond the contract: the spool's failed replay attempts, which the dashboard's
	// header shows.
	FailedReplays int64 `json:"failedReplays"`
}

// BufferStats is the spool in the contract's terms.
type BufferStats struct {
	PendingCount int64       `json:"pendingCount"`
	FailedCount  int64       `json:"failedCount"`
	DBHealthy    bool        `json:"dbHealthy"`
	FailedFiles  FailedFiles `json:"failedFiles"`
}

// FailedFiles describes the dead-spool file: pushes set aside because PostgreSQL refused them for good.
type FailedFiles struct {
	Count         int     `json:"count"`
	TotalBytes    int64   `json:"totalBytes"`
	TotalMB       float64 `json:"totalMB"`
	FailoverCount int64   `json:"failoverCount"`
	QoS0Count     int64   `json:"qos0Count"`
}

// MaintenanceSwitched answers POST /api/v1/system/maintenance.
type MaintenanceSwitched struct {
	MaintenanceMode  bool   `json:"maintenanceMode"`
	BufferedMessages int64  `json:"bufferedMessages"`
	BufferHealthy    bool   `json:"bufferHealthy"`
	Message          string `json:"message"`
}

// PopMaintenanceStatus answers GET and POST /api/v1/system/maintenance/pop.
type PopMaintenanceStatus struct {
	PopMaintenanceMode bool   `json:"popMaintenanceMode"`
	Message            string `json:"message"`
}

// MaintenanceStatus reads both flags fresh from the database (the last known ones while it is
// unreachable) and the spool's state.
func (e *Engine) MaintenanceStatus(ctx context.Context) MaintenanceStatus {
	push, pop := e.freshMaintenance(ctx)
	b := e.bufferStats()
	v := MaintenanceStatus{MaintenanceMode: push, PopMaintenanceMode: pop, BufferedMessages: b.PendingCount,
		BufferHealthy: !e.SpoolHealth().Stalled, BufferStats: b}
	if e.spool != nil {
		v.FailedReplays = e.spool.Failed()
	}
	return v
}

// SwitchMaintenance turns push maintenance on or off for every broker.
func (e *Engine) SwitchMaintenance(ctx context.Context, on bool) (MaintenanceSwitched, error) {
	push, _, err := e.switchMaintenance(ctx, MaintenancePush, on)
	if err != nil {
		return MaintenanceSwitched{}, err
	}
	msg := "Maintenance mode DISABLED. Background processor will drain buffer to DB."
	if push {
		msg = "Maintenance mode ENABLED. All PUSHes routing to file buffer."
	}
	h := e.SpoolHealth()
	return MaintenanceSwitched{MaintenanceMode: push, BufferedMessages: h.Pending, BufferHealthy: !h.Stalled,
		Message: msg}, nil
}

// PopMaintenanceStatus reads the pop maintenance flag fresh.
func (e *Engine) PopMaintenanceStatus(ctx context.Context) PopMaintenanceStatus {
	_, pop := e.freshMaintenance(ctx)
	return popMaintenance(pop, "Pop maintenance mode is ON. All POP operations return empty arrays.",
		"Pop maintenance mode is OFF. Normal operation.")
}

// SwitchPopMaintenance turns pop maintenance on or off for every broker.
func (e *Engine) SwitchPopMaintenance(ctx context.Context, on bool) (PopMaintenanceStatus, error) {
	_, pop, err := e.switchMaintenance(ctx, MaintenancePop, on)
	if err != nil {
		return PopMaintenanceStatus{}, err
	}
	return popMaintenance(pop, "Pop maintenance mode ENABLED. All POP operations will return empty arrays.",
		"Pop maintenance mode DISABLED. Normal operation resumed."), nil
}

// switchMaintenance sets one flag and answers with both as the database now holds them, so that a
// concurrent switch by another broker shows in the answer.
func (e *Engine) switchMaintenance(ctx context.Context, flag string, on bool) (push, pop bool, err error) {
	if err := e.SetMaintenance(ctx, flag, on); err != nil {
		return false, false, err
	}
	push, pop = e.freshMaintenance(ctx)
	return push, pop, nil
}

// popMaintenance words the pop flag's answer: ifOn when it is set, ifOff when not.
func popMaintenance(on bool, ifOn, ifOff string) PopMaintenanceStatus {
	if on {
		return PopMaintenanceStatus{PopMaintenanceMode: true, Message: ifOn}
	}
	return PopMaintenanceStatus{Message: ifOff}
}

// freshMaintenance drops the cached flags first: an operator asking sees another broker's switch at once.
func (e *Engine) freshMaintenance(ctx context.Context) (push, pop bool) {
	e.maint.mu.Lock()
	if !e.dbDown.Load() {
		e.maint.loadedAt = time.Time{} // while the database is down the last known flags stand
	}
	e.maint.mu.Unlock()
	return e.Maintenance(ctx)
}

// bufferStats maps the spool onto the contract's buffer numbers. The dead-spool file is counted from
// disk, so the numbers survive a restart and drop when an operator empties the file.
func (e *Engine) bufferStats() BufferStats {
	h := e.SpoolHealth()
	b := BufferStats{PendingCount: h.Pending, FailedCount: h.DeadSpooled, DBHealthy: !e.dbDown.Load()}
	if e.opt.DeadSpoolPath == "" {
		b.FailedFiles.FailoverCount = b.FailedCount
		return b
	}
	lines, size, err := countLines(e.opt.DeadSpoolPath)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("maintenance: cannot read the dead-spool file", "file", e.opt.DeadSpoolPath, "error", err)
		}
		b.FailedFiles.FailoverCount = b.FailedCount
		return b
	}
	b.FailedCount = lines
	if size > 0 {
		b.FailedFiles.Count = 1
	}
	b.FailedFiles.TotalBytes = size
	b.FailedFiles.TotalMB = float64(size) / (1 << 20)
	b.FailedFiles.FailoverCount = lines // every spooled push is a failover push: there is no QoS-0 buffering
	return b
}

// countLines counts the newline-terminated records of a file and its size.
func countLines(path string) (lines, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, rerr := f.Read(buf)
		lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		size += int64(n)
		if rerr == io.EOF {
			return lines, size, nil
		}
		if rerr != nil {
			return 0, 0, rerr
		}
	}
}
