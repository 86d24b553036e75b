package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestInterpretFailoverErrors: what a failover throws at a session is unavailable (spool, 503), never a
// statement failure (500); a standby's refusal also says read-only.
func TestInterpretFailoverErrors(t *testing.T) {
	t.Parallel()
	readOnly := interpret(&pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"})
	require.ErrorIs(t, readOnly, ErrUnavailable)
	require.ErrorIs(t, readOnly, ErrReadOnly)
	require.ErrorIs(t, interpret(fmt.Errorf("exec: %w", pgconn.ErrConnClosed)), ErrUnavailable)
	require.ErrorIs(t, interpret(fmt.Errorf("validate: %w", ErrReadOnly)), ErrUnavailable)
	var pe *PgError
	require.True(t, errors.As(interpret(&pgconn.PgError{Code: "23505", Message: "duplicate"}), &pe))
	require.NotErrorIs(t, interpret(&pgconn.PgError{Code: "23505"}), ErrUnavailable)
	for _, err := range []error{readOnly, interpret(fmt.Errorf("exec: %w", pgconn.ErrConnClosed)), interpret(&pgconn.PgError{Code: "23505"}), ErrNotFound} {
		require.Same(t, err, interpret(err), "interpreting twice changes nothing: %v", err)
	}
}
