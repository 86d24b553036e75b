package httpapi

import "net/http"

// errMigration explains why the original's migration wizard routes do nothing here: copying a live
// database is a pg_dump | pg_restore job the operator runs with maintenance on, not something the
// broker process should shell out to (it would need the client binaries and the target's credentials).
var errMigration = &apiError{kind: kindNotBuiltIn,
	msg: "database migration is not built into this broker: turn on push and pop maintenance, copy the schema with " +
		"pg_dump | pg_restore, repoint DATABASE_URL and turn maintenance off (see docs/dashboard.md)"}

// migrationRoute is one route of the migration wizard: admin only, answered 501 with errMigration.
func migrationRoute(method, pattern string) Route {
	return Route{method, pattern, Admin, "501: database migration is not built in (docs/dashboard.md)",
		func(*Server, http.ResponseWriter, *http.Request) error { return errMigration }}
}
