package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
)

// Modes are the maintenance flags every broker on the database shares (system_state): a cached read
// for the hot paths, so that a push does not cost a read of them while a change on any broker is seen
// everywhere within maintenanceTTL, and the maintenance routes' fresh reads and switches.
type Modes struct {
	st            *store.Store
	dbDown        *atomic.Bool       // the engine's: while set, the last known flags stand
	health        func() SpoolHealth // the engine's SpoolHealth
	spool         *spool.Spool       // nil without a spool
	deadSpoolPath string
	log           *slog.Logger
	replayKick    chan struct{} // the engine's: push maintenance ended, replay the spool now

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

// Modes are the shared maintenance flags and the maintenance routes.
func (e *Engine) Modes() *Modes { return e.modes }

// Flags reports the push and pop maintenance flags. When the database cannot be read, the last known
// values stand.
func (m *Modes) Flags(ctx context.Context) (push, pop bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.loadedAt) < maintenanceTTL {
		return m.push, m.pop
	}
	if m.dbDown.Load() && !m.loadedAt.IsZero() {
		return m.push, m.pop // do not spend a connect timeout on every push during an outage
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if flags, err := m.st.States(rctx, MaintenancePush, MaintenancePop); err == nil {
		m.push, m.pop = flags[MaintenancePush], flags[MaintenancePop]
	}
	m.loadedAt = time.Now()
	return m.push, m.pop
}

// Set switches one maintenance flag for every broker on the database.
func (m *Modes) Set(ctx context.Context, key string, on bool) error {
	if err := m.st.SetState(ctx, key, on); err != nil {
		return OpFailed("maintenance", err)
	}
	m.mu.Lock()
	m.loadedAt = time.Time{}
	m.mu.Unlock()
	if !on {
		signal(m.replayKick)
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

// Status reads both flags fresh from the database (the last known ones while it is
// unreachable) and the spool's state.
func (m *Modes) Status(ctx context.Context) MaintenanceStatus {
	push, pop := m.fresh(ctx)
	b := m.bufferStats()
	v := MaintenanceStatus{MaintenanceMode: push, PopMaintenanceMode: pop, BufferedMessages: b.PendingCount,
		BufferHealthy: !m.health().Stalled, BufferStats: b}
	if m.spool != nil {
		v.FailedReplays = m.spool.Failed()
	}
	return v
}

// Switch turns push maintenance on or off for every broker.
func (m *Modes) Switch(ctx context.Context, on bool) (MaintenanceSwitched, error) {
	push, _, err := m.switchFlag(ctx, MaintenancePush, on)
	if err != nil {
		return MaintenanceSwitched{}, err
	}
	msg := "Maintenance mode DISABLED. Background processor will drain buffer to DB."
	if push {
		msg = "Maintenance mode ENABLED. All PUSHes routing to file buffer."
	}
	h := m.health()
	return MaintenanceSwitched{MaintenanceMode: push, BufferedMessages: h.Pending, BufferHealthy: !h.Stalled,
		Message: msg}, nil
}

// PopStatus reads the pop maintenance flag fresh.
func (m *Modes) PopStatus(ctx context.Context) PopMaintenanceStatus {
	_, pop := m.fresh(ctx)
	return popMaintenance(pop, "Pop maintenance mode is ON. All POP operations return empty arrays.",
		"Pop maintenance mode is OFF. Normal operation.")
}

// SwitchPop turns pop maintenance on or off for every broker.
func (m *Modes) SwitchPop(ctx context.Context, on bool) (PopMaintenanceStatus, error) {
	_, pop, err := m.switchFlag(ctx, MaintenancePop, on)
	if err != nil {
		return PopMaintenanceStatus{}, err
	}
	return popMaintenance(pop, "Pop maintenance mode ENABLED. All POP operations will return empty arrays.",
		"Pop maintenance mode DISABLED. Normal operation resumed."), nil
}

// switchFlag sets one flag and answers with both as the database now holds them, so that a
// concurrent switch by another broker shows in the answer.
func (m *Modes) switchFlag(ctx context.Context, flag string, on bool) (push, pop bool, err error) {
	if err := m.Set(ctx, flag, on); err != nil {
		return false, false, err
	}
	push, pop = m.fresh(ctx)
	return push, pop, nil
}

// popMaintenance words the pop flag's answer: ifOn when it is set, ifOff when not.
func popMaintenance(on bool, ifOn, ifOff string) PopMaintenanceStatus {
	if on {
		return PopMaintenanceStatus{PopMaintenanceMode: true, Message: ifOn}
	}
	return PopMaintenanceStatus{Message: ifOff}
}

// fresh drops the cached flags first: an operator asking sees another broker's switch at once.
func (m *Modes) fresh(ctx context.Context) (push, pop bool) {
	m.mu.Lock()
	if !m.dbDown.Load() {
		m.loadedAt = time.Time{} // while the database is down the last known flags stand
	}
	m.mu.Unlock()
	return m.Flags(ctx)
}

// bufferStats maps the spool onto the contract's buffer numbers. The dead-spool file is counted from
// disk, so the numbers survive a restart and drop when an operator empties the file.
func (m *Modes) bufferStats() BufferStats {
	h := m.health()
	b := BufferStats{PendingCount: h.Pending, FailedCount: h.DeadSpooled, DBHealthy: !m.dbDown.Load()}
	if m.deadSpoolPath == "" {
		b.FailedFiles.FailoverCount = b.FailedCount
		return b
	}
	lines, size, err := countLines(m.deadSpoolPath)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.log.Warn("maintenance: cannot read the dead-spool file", "file", m.deadSpoolPath, "error", err)
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
