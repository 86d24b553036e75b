package httpapi

import (
	"context"
	"encoding/json"

	"github.com/queen-go/queen/internal/engine"
)

// Push and pop maintenance have the same two routes each, a read of the flag and a switch; they
// differ only in the Modes methods the route table hands these.

func maintenanceStatus[T any](read func(m *engine.Modes, ctx context.Context) T) call[T] {
	return func(s *Server, q request) (T, error) { return read(s.eng.Modes(), q.Context()), nil }
}

// maintenanceSwitch reads the {"enabled":bool} body both switches take; a missing or non-boolean
// enabled gets the contract's one text.
func maintenanceSwitch[T any](flip func(m *engine.Modes, ctx context.Context, on bool) (T, error)) call[T] {
	return func(s *Server, q request) (T, error) {
		var body struct {
			Enabled json.RawMessage `json:"enabled"`
		}
		var on bool
		if err := q.decode(&body); err != nil {
			var zero T
			return zero, err
		}
		if !present(body.Enabled) || json.Unmarshal(body.Enabled, &on) != nil {
			var zero T
			return zero, badRequest("enabled (boolean) is required")
		}
		return flip(s.eng.Modes(), q.Context(), on)
	}
}
