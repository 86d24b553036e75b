package store

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// connectUnavailable reports whether err is a failure to get a working session that waiting cures, so
// that the caller answers "retry later" (ErrUnavailable: 503 with Retry-After, pushes to the spool)
// rather than failing the request: the server refused or dropped the connection, is starting or
// stopping, has no connection slot left, or a pooler in front of it could not log in to it (PgBouncer
// answers its clients with its own FATAL errors: server_login_retry, query_wait_timeout, pool or client
// limits). A database that does not exist (3D000) and refused credentials (class 28) are configuration
// errors: retrying does not help, and they stay what they are.
func connectUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case code == "3D000", len(code) >= 2 && code[:2] == "28":
			return false
		case len(code) >= 2 && code[:2] == "08", // connection exception; PgBouncer's own errors are 08P01
			code == "57P01", code == "57P02", code == "57P03", // admin or crash shutdown, cannot connect now
			code == "53300", // too_many_connections
			code == "53000": // insufficient_resources (out of processes or memory for a new session)
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}
