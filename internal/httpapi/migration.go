package httpapi

import "net/http"

// errMigration explains why the original's migration wizard routes do nothing here: copying a live
// database is a pg_dump | pg_restore job the operator runs with maintenance on, not something the
// broker process should shell out to (it would need the client binaries and the target's credentials).
var errMigration = &apiError{kind: kindNotBuiltIn,
	msg: "database migration is not built into this broker: turn on push and pop maintenance, copy the schema with " +
		"pg_dump | pg_restore, repoint DATABASE_URL and turn maintenance off (see docs/dashboard.md)"}

func (s *Server) handleMigration(w http.ResponseWriter, r *http.Request) error { return errMigration }
