package engine

import "errors"

// A broker may start while PostgreSQL is unreachable (docs/decisions.md, "Starting without
// PostgreSQL"): until the schema is migrated, every push goes to the spool, replay waits, and Ping
// fails so that /health answers 503.

// ErrNotMigrated is Ping's answer before the schema was migrated.
var ErrNotMigrated = errors.New("database not migrated yet")

// HoldUntilMigrated marks the schema as not migrated yet; call it before Start.
func (e *Engine) HoldUntilMigrated() { e.unmigrated.Store(true) }

// Migrated lifts HoldUntilMigrated: replay and direct pushes resume.
func (e *Engine) Migrated() {
	e.unmigrated.Store(false)
	if e.spool != nil {
		signal(e.replayKick)
	}
}
