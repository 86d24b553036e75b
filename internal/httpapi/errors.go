package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
)

// errorKind names one row of errorTable.
type errorKind string

// The broker's error kinds. Each error a handler returns falls into exactly one (see classify).
const (
	kindBadRequest   errorKind = "bad_request"       // malformed input or a broken rule; nothing was applied
	kindNotFound     errorKind = "not_found"         // the addressed queue, message, lease… does not exist
	kindNoSuchRoute  errorKind = "no_such_route"     // no route matches the method and path
	kindTooLarge     errorKind = "payload_too_large" // the body exceeds QUEEN_MAX_BODY_BYTES, or its entries QUEEN_MAX_BATCH_ITEMS
	kindUnauthorized errorKind = "unauthorized"      // no token, or a token that does not verify
	kindForbidden    errorKind = "forbidden"         // a valid token whose roles do not pass
	kindAuthFailed   errorKind = "auth_failed"       // the broker could not check the token (JWKS, secret)
	kindPool         errorKind = "pool"              // no database connection became free in time
	kindUnavailable  errorKind = "unavailable"       // PostgreSQL cannot be reached: nothing was applied, retry later
	kindReadOnly     errorKind = "read_only"         // only a standby can be reached (a failover is under way): as unavailable
	kindOperation    errorKind = "operation_failed"  // a database operation failed: "<op> failed: <detail>"
	kindSpoolFailed  errorKind = "spool_failed"      // a push reached neither PostgreSQL nor the disk spool
	kindInternal     errorKind = "internal"          // anything unclassified; the cause goes to the log only
	kindNotBuiltIn   errorKind = "not_implemented"   // a route of the original this broker deliberately lacks (migration)
)

// errorRow is what the client sees for a kind.
type errorRow struct {
	Status int
	Code   string // the envelope's `code`; only rows whose code is part of the contract carry one
	Text   string // fixed text; empty: the error's own message
	// RetryAfter, when set, is the Retry-After header (seconds): the answer is advice to come back.
	RetryAfter string
}

// unavailableRetryAfter is when a client should retry while PostgreSQL is unreachable: long enough
// that a fleet of consumers does not hammer a broker that can serve none of them, short enough to
// resume soon after the database returns.
const unavailableRetryAfter = "5"

// errorTable is the one mapping from error kinds to HTTP answers.
var errorTable = map[errorKind]errorRow{
	kindBadRequest:   {Status: http.StatusBadRequest},
	kindNotFound:     {Status: http.StatusNotFound},
	kindNoSuchRoute:  {Status: http.StatusNotFound, Code: "no_such_route", Text: "Not Found"},
	kindTooLarge:     {Status: http.StatusRequestEntityTooLarge},
	kindUnauthorized: {Status: http.StatusUnauthorized},
	kindForbidden:    {Status: http.StatusForbidden},
	kindAuthFailed:   {Status: http.StatusInternalServerError},
	kindPool:         {Status: http.StatusInternalServerError, Text: "pool"}, // the contract's text for an exhausted pool
	kindUnavailable: {Status: http.StatusServiceUnavailable, RetryAfter: unavailableRetryAfter,
		Text: "database unavailable: PostgreSQL cannot be reached; nothing was applied, retry after Retry-After seconds"},
	kindReadOnly: {Status: http.StatusServiceUnavailable, RetryAfter: unavailableRetryAfter,
		Text: "database unavailable: PostgreSQL is read-only (only a standby is reachable: failover in progress?); nothing was applied, retry after Retry-After seconds"},
	kindOperation:   {Status: http.StatusInternalServerError},
	kindSpoolFailed: {Status: http.StatusInternalServerError}, // body: every push item marked failed
	kindInternal:    {Status: http.StatusInternalServerError, Text: "internal error"},
	kindNotBuiltIn:  {Status: http.StatusNotImplemented, Code: "not_implemented"},
}

// apiError is an error the transport itself raises (bad input it decoded, an unknown route).
type apiError struct {
	kind errorKind
	msg  string
}

func (e *apiError) Error() string {
	if e.msg == "" {
		return errorTable[e.kind].Text
	}
	return e.msg
}

func badRequest(msg string) error { return &apiError{kind: kindBadRequest, msg: msg} }

// notFound is the transport's not-found (a path value that cannot name anything, a disabled part);
// it is the same error the engine returns for a missing row.
func notFound(msg string) error { return &engine.NotFoundError{Msg: msg} }

var errNoSuchRoute = &apiError{kind: kindNoSuchRoute}

// envelope is the body of every error response.
type envelope struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
	// RequestID is set on every 5xx: the log line with the cause carries the same id.
	RequestID string `json:"requestId,omitempty"`
}

// bodyError is an error whose answer is a body of its own instead of the envelope.
type bodyError interface{ ErrorBody() any }

// classify finds err's kind and, for rows without a fixed text, the text to send.
func classify(err error) (errorKind, string) {
	var (
		sfe *engine.SpoolFailedError
		nf  *engine.NotFoundError
		aue *auth.Error
		ae  *apiError
		mbe *http.MaxBytesError
		inv *engine.InvalidError
		op  *engine.OpError
	)
	switch {
	case errors.As(err, &sfe):
		return kindSpoolFailed, sfe.Error()
	case errors.As(err, &nf):
		return kindNotFound, nf.Msg
	case errors.As(err, &aue):
		return authKind(aue.Status), aue.Message
	case errors.As(err, &ae):
		return ae.kind, ae.msg
	case errors.As(err, &mbe):
		return kindTooLarge, tooLargeText(mbe.Limit)
	case errors.As(err, &inv):
		return kindBadRequest, inv.Msg
	case errors.Is(err, engine.ErrReadOnly):
		return kindReadOnly, ""
	case errors.Is(err, engine.ErrUnavailable):
		// Before OpError, which wraps it: the operation did not fail, the database is away.
		return kindUnavailable, ""
	case engine.InputRejected(err):
		// A value the edge rules let through but PostgreSQL refused: still the client's input.
		return kindBadRequest, "bad body: a value was refused by the database"
	case errors.Is(err, engine.ErrPool):
		return kindPool, ""
	case errors.Is(err, engine.ErrNotFound):
		return kindNotFound, err.Error()
	case errors.As(err, &op):
		// Never the driver's text (table, index, host names): the log has it under the request id.
		return kindOperation, op.Op + " failed: internal error"
	}
	return kindInternal, ""
}

// authKind maps the status an auth.Error carries to its row.
func authKind(status int) errorKind {
	switch status {
	case http.StatusUnauthorized:
		return kindUnauthorized
	case http.StatusForbidden:
		return kindForbidden
	}
	return kindAuthFailed
}

// writeError answers err from the table. Unclassified errors and every 5xx are logged with their cause.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	kind, msg := classify(err)
	row := errorTable[kind]
	id := requestID(r.Context())
	level := slog.LevelError
	if kind == kindUnavailable || kind == kindReadOnly {
		// Every request fails alike while PostgreSQL is away: the background jobs log the outage once
		// (maintenance.OutageLog), and a line per request would bury it.
		level = slog.LevelDebug
	}
	if kind == kindInternal || row.Status >= 500 || engine.InputRejected(err) {
		s.log.Log(r.Context(), level, "request failed", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", row.Status), slog.String("request_id", id), slog.Any("error", err))
	}
	if row.RetryAfter != "" {
		w.Header().Set("Retry-After", row.RetryAfter)
	}
	var be bodyError
	if errors.As(err, &be) {
		writeJSON(w, row.Status, be.ErrorBody())
		return
	}
	if row.Text != "" {
		msg = row.Text
	}
	env := envelope{Error: msg, Code: row.Code}
	if row.Status >= 500 && id != "" {
		env.RequestID = id
		if kind != kindPool {
			env.Error += " (request " + id + ")"
		}
	}
	writeJSON(w, row.Status, env)
}
