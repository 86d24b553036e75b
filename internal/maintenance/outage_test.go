package maintenance

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestOutageLoggedOnceThenSummarised: while PostgreSQL is unreachable, the passes of every loop that
// fail are one warning when the outage begins, one summary per SummaryEvery while it lasts, and one
// line when every loop that met it runs again; a pass's own failure is still logged each time.
func TestOutageLoggedOnceThenSummarised(t *testing.T) {
	var buf bytes.Buffer
	o := NewOutageLog(slog.New(slog.NewTextHandler(&buf, nil)))
	clock := time.Unix(1_000_000, 0)
	o.now = func() time.Time { return clock }
	down := errors.Join(store.ErrUnavailable, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"))
	lines := func() []string { return strings.Split(strings.TrimSpace(buf.String()), "\n") }

	// 3 loops failing every 100 ms for 150 s.
	for i := range 1500 {
		clock = clock.Add(100 * time.Millisecond)
		o.failed(fmt.Sprint("loop", i%3), down)
	}
	got := lines()
	require.Len(t, got, 3, "one warning, then a summary a minute: %s", buf.String())
	require.Contains(t, got[0], "PostgreSQL unreachable")
	require.Contains(t, got[0], "connection refused", "the cause, on one line")
	require.Contains(t, got[1], "PostgreSQL still unreachable")
	require.Contains(t, got[1], "for=1m0s")
	require.Contains(t, got[2], "for=2m0s")

	o.succeeded("loop0")
	o.succeeded("loop1")
	require.Len(t, lines(), 3, "loop2 still fails: the outage goes on")
	o.succeeded("loop2")
	got = lines()
	require.Len(t, got, 4)
	require.Contains(t, got[3], "PostgreSQL reachable again")
	require.Contains(t, got[3], "skipped_passes=1500")

	// The next outage is logged again, from its own start.
	o.failed("loop0", fmt.Errorf("stats: %w", store.ErrPool))
	require.Len(t, lines(), 5)
	require.Contains(t, lines()[4], "PostgreSQL unreachable")
	require.True(t, Unreachable(down))
	require.False(t, Unreachable(errors.New("syntax error")))
}
