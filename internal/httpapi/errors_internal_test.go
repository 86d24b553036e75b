package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/auth"
	"github.com/queen-go/queen/internal/engine"
)

// TestErrorTable walks every row of errorTable with an error of its kind and checks the answer
// against the contract: status, body text and code.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	spooled := []engine.PushResult{{Index: 0, TransactionID: "t1", Status: engine.StatusFailed, QueueName: "q",
		Queue: "q", Partition: "Default", Error: "File buffer write failed"}}
	cases := []struct {
		kind   errorKind
		err    error
		status int
		body   string
	}{
		{kindBadRequest, badRequest("queue is required"), 400, `{"error":"queue is required"}`},
		{kindBadRequest, fmt.Errorf("ack: %w", &engine.InvalidError{Msg: "status must be one of completed"}), 400,
			`{"error":"status must be one of completed"}`},
		{kindNotFound, notFound("Queue not found: q"), 404, `{"error":"Queue not found: q"}`},
		{kindNotFound, fmt.Errorf("lease: %w", &engine.NotFoundError{Msg: "lease x not found"}), 404, `{"error":"lease x not found"}`},
		{kindNotFound, &engine.OpError{Op: "queue", Err: engine.ErrNotFound}, 404, `{"error":"queue failed: not found"}`},
		{kindNoSuchRoute, errNoSuchRoute, 404, `{"error":"Not Found","code":"no_such_route"}`},
		{kindTooLarge, &http.MaxBytesError{Limit: 10}, 413, `{"error":"request body exceeds QUEEN_MAX_BODY_BYTES (10)"}`},
		{kindUnauthorized, &auth.Error{Status: 401, Message: "Authentication required"}, 401, `{"error":"Authentication required"}`},
		{kindForbidden, &auth.Error{Status: 403, Message: "Insufficient permissions"}, 403, `{"error":"Insufficient permissions"}`},
		{kindAuthFailed, &auth.Error{Status: 500, Message: "Failed to fetch JWKS"}, 500, `{"error":"Failed to fetch JWKS"}`},
		{kindPool, &engine.OpError{Op: "pop", Err: engine.ErrPool}, 500, `{"error":"pool"}`},
		{kindPool, fmt.Errorf("ack: %w", engine.ErrPool), 500, `{"error":"pool"}`},
		{kindOperation, &engine.OpError{Op: "ack", Err: errors.New("boom")}, 500, `{"error":"ack failed: internal error"}`},
		{kindUnavailable, &engine.OpError{Op: "pop", Err: errors.Join(engine.ErrUnavailable, errors.New("dial tcp: connection refused"))}, 503,
			`{"error":"database unavailable: PostgreSQL cannot be reached; nothing was applied, retry after Retry-After seconds"}`},
		{kindReadOnly, &engine.OpError{Op: "pop", Err: errors.Join(engine.ErrUnavailable, engine.ErrReadOnly, errors.New("ERROR: cannot execute INSERT in a read-only transaction (SQLSTATE 25006)"))}, 503,
			`{"error":"database unavailable: PostgreSQL is read-only (only a standby is reachable: failover in progress?); nothing was applied, retry after Retry-After seconds"}`},
		{kindSpoolFailed, &engine.SpoolFailedError{Results: spooled, Err: errors.New("disk full")}, 500,
			`[{"index":0,"transaction_id":"t1","status":"failed","queueName":"q","queue":"q","partition":"Default","error":"File buffer write failed"}]`},
		{kindInternal, errors.New("driver detail that must not leak"), 500, `{"error":"internal error"}`},
		{kindNotBuiltIn, &apiError{kind: kindNotBuiltIn, msg: "not built in"}, 501, `{"error":"not built in","code":"not_implemented"}`},
	}
	s := &Server{log: slog.New(slog.DiscardHandler)}
	covered := map[errorKind]bool{}
	for _, c := range cases {
		kind, _ := classify(c.err)
		require.Equal(t, c.kind, kind, "%v", c.err)
		require.Equal(t, c.status, errorTable[c.kind].Status, c.kind)
		w := httptest.NewRecorder()
		s.writeError(w, httptest.NewRequest("GET", "/api/v1/x", nil), c.err)
		require.Equal(t, c.status, w.Code, c.kind)
		require.Equal(t, "application/json", w.Header().Get("Content-Type"))
		require.JSONEq(t, c.body, w.Body.String(), c.kind)
		require.Equal(t, errorTable[c.kind].RetryAfter, w.Header().Get("Retry-After"), c.kind)
		covered[c.kind] = true
	}
	for kind := range errorTable {
		require.True(t, covered[kind], "errorTable row %s has no case", kind)
	}
	require.Equal(t, "5", errorTable[kindUnavailable].RetryAfter, "a 503 tells the client when to come back")
}
