package engine_test

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/engine"
	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// spoolEngine starts an engine logging to log, on a database of its own (st), with a spool of its own
// (sp) and push maintenance on, so that every push goes to the spool. All three end with the test.
func spoolEngine(t *testing.T, log io.Writer) (eng *engine.Engine, st *store.Store, sp *spool.Spool) {
	t.Helper()
	st, err := store.Open(t.Context(), store.Options{URL: testenv.NewDatabase(t)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	sp, err = spool.Open(t.TempDir(), spool.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sp.Close() })
	eng = engine.New(st, slog.New(slog.NewTextHandler(log, nil)), engine.Options{Spool: sp})
	eng.Start(t.Context())
	t.Cleanup(eng.Stop)
	require.NoError(t, eng.Modes().Set(t.Context(), engine.MaintenancePush, true))
	return eng, st, sp
}

// TestSpoolWriteFailureFailsEveryItem: a push diverted to a spool that cannot take it is refused as a
// whole, every item marked failed with the contract's text, and nothing is stored.
func TestSpoolWriteFailureFailsEveryItem(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	eng, _, sp := spoolEngine(t, io.Discard)
	require.NoError(t, sp.Close()) // every append now fails

	res, err := eng.Push(ctx, []engine.PushItem{{Queue: "q", TransactionID: "a"}, {Queue: "q", Partition: "p", TransactionID: "b"}})
	require.Nil(t, res)
	var sfe *engine.SpoolFailedError
	require.True(t, errors.As(err, &sfe), "%v", err)
	require.Len(t, sfe.Results, 2)
	for i, r := range sfe.Results {
		require.Equal(t, i, r.Index)
		require.Equal(t, engine.StatusFailed, r.Status)
		require.Equal(t, "File buffer write failed", r.Error)
		require.Equal(t, "q", r.Queue)
	}
	require.Equal(t, "p", sfe.Results[1].Partition)
	pending, _, _ := eng.SpoolStats()
	require.Zero(t, pending)
}

// TestSpoolReplayOutageWarnsOnce: replay attempts come every FILE_BUFFER_FLUSH_MS; while they fail the
// log says so once (then once a minute), and /health counts every attempt.
func TestSpoolReplayOutageWarnsOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var logs testenv.SyncBuffer
	eng, st, _ := spoolEngine(t, &logs)
	_, err := eng.Push(ctx, []engine.PushItem{{Queue: "q", TransactionID: "a"}})
	require.NoError(t, err)
	require.NoError(t, eng.Modes().Set(ctx, engine.MaintenancePush, false))
	push, _ := eng.Modes().Flags(ctx) // read while the database answers: it stays off
	require.False(t, push)
	st.Close() // every replay attempt now fails

	for range 50 {
		require.NoError(t, eng.ReplaySpool(ctx))
	}
	require.Equal(t, 1, strings.Count(logs.String(), "spool replay paused"), logs.String())
	h := eng.SpoolHealth()
	require.EqualValues(t, 50, h.ReplayFailures)
	require.EqualValues(t, 1, h.Pending)
}

// TestSpoolAcceptsFollowsTheLastAppend: /readyz keeps a broker in its load balancer while its spool
// takes pushes; a spool append that failed takes it out until one succeeds.
func TestSpoolAcceptsFollowsTheLastAppend(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	eng, st, sp := spoolEngine(t, io.Discard)
	require.False(t, engine.New(st, slog.New(slog.DiscardHandler), engine.Options{}).SpoolAccepts(), "no spool")
	require.True(t, eng.SpoolAccepts())
	_, err := eng.Push(ctx, []engine.PushItem{{Queue: "q", TransactionID: "a"}})
	require.NoError(t, err)
	require.True(t, eng.SpoolAccepts())
	require.NoError(t, sp.Close()) // every append now fails
	_, err = eng.Push(ctx, []engine.PushItem{{Queue: "q", TransactionID: "b"}})
	var failed *engine.SpoolFailedError
	require.ErrorAs(t, err, &failed)
	require.False(t, eng.SpoolAccepts())
}
