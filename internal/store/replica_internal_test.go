package store

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestReplicaLag: the standby's lag is the age of the newest primary position it has replayed past, and
// the older positions are dropped; behind every position, it is at least the age of the oldest.
func TestReplicaLag(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	marks := []walMark{{t0, 100}, {t0.Add(time.Second), 200}, {t0.Add(2 * time.Second), 300}}
	now := t0.Add(2500 * time.Millisecond)

	lag, kept := replicaLag(marks, 250, now)
	require.Equal(t, 1500*time.Millisecond, lag, "replayed past 200, not 300")
	require.Equal(t, marks[1:], kept)

	lag, kept = replicaLag(marks, 300, now)
	require.Equal(t, 500*time.Millisecond, lag, "caught up with the last position read")
	require.Equal(t, marks[2:], kept)

	lag, kept = replicaLag(marks, 50, now)
	require.Equal(t, 2500*time.Millisecond, lag, "behind every position: at least the oldest's age")
	require.Equal(t, marks, kept)
}

// TestReplicaFault: what a standby's own trouble looks like (unreachable, a read cancelled by a recovery
// conflict) is told apart from what the same read would meet on the primary too.
func TestReplicaFault(t *testing.T) {
	t.Parallel()
	conflict := interpret(&pgconn.PgError{Code: "40001", Message: "canceling statement due to conflict with recovery"})
	require.True(t, ReplicaFault(fmt.Errorf("list queues: %w", conflict)))
	require.True(t, ReplicaFault(interpret(io.ErrUnexpectedEOF)))
	require.True(t, ReplicaFault(interpret(pgconn.ErrConnClosed)))
	require.False(t, ReplicaFault(interpret(&pgconn.PgError{Code: "42P01", Message: "relation does not exist"})))
	require.False(t, ReplicaFault(interpret(pgx.ErrNoRows)))
	require.False(t, ReplicaFault(context.Canceled))
}
