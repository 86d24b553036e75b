package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
)

// apiError is an error that already knows its HTTP answer.
type apiError struct {
	status int
	msg    string
	code   string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) error { return &apiError{status: http.StatusBadRequest, msg: msg} }

var errNoSuchRoute = &apiError{status: http.StatusNotFound, msg: "Not Found", code: "no_such_route"}

// envelope is the body of every error response.
type envelope struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
	// RequestID is set on every 5xx: the log line with the cause carries the same id.
	RequestID string `json:"requestId,omitempty"`
}

// classify is the one table from errors to (status, envelope). Unclassified errors are a generic 500
// whose cause goes to the log only.
func classify(err error) (int, envelope, bool) {
	var ae *apiError
	var inv *engine.InvalidError
	var op *engine.OpError
	var mbe *http.MaxBytesError
	var aue *auth.Error
	var nf *engine.NotFoundError
	switch {
	case errors.As(err, &nf):
		return http.StatusNotFound, envelope{Error: nf.Msg}, true
	case errors.As(err, &aue):
		return aue.Status, envelope{Error: aue.Message}, true
	case errors.As(err, &ae):
		return ae.status, envelope{Error: ae.msg, Code: ae.code}, true
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, envelope{Error: tooLargeText(mbe.Limit)}, true
	case errors.As(err, &inv):
		return http.StatusBadRequest, envelope{Error: inv.Msg}, true
	case engine.InputRejected(err):
		// A value the edge rules let through but PostgreSQL refused: still the client's input.
		return http.StatusBadRequest, envelope{Error: "bad body: a value was refused by the database"}, false
	case errors.Is(err, engine.ErrPool):
		return http.StatusInternalServerError, envelope{Error: "pool"}, true
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound, envelope{Error: err.Error()}, true
	case errors.As(err, &op):
		// Never the driver's text (table, index, host names): the log has it under the request id.
		return http.StatusInternalServerError, envelope{Error: op.Op + " failed: internal error"}, true
	}
	return http.StatusInternalServerError, envelope{Error: "internal error"}, false
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, env, known := classify(err)
	if !known || status >= 500 {
		id := requestID(r.Context())
		s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", status), slog.String("request_id", id), slog.Any("error", err))
		if status >= 500 {
			env.RequestID = id
			if env.Error != "pool" {
				env.Error += " (request " + id + ")"
			}
		}
	}
	writeJSON(w, status, env)
}
