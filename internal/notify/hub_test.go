package notify_test

import (
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// testenv.Main starts the private PostgreSQL and checks with goleak that no hub goroutine outlives
// the tests.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), store.Options{URL: testenv.NewDatabase(t)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

func TestHubStartStopStress(t *testing.T) {
	t.Parallel()
	h := notify.New(openStore(t), slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				_ = h.Start(t.Context()) // nil, or "already started" when another goroutine's run is up
				h.Announce("q", 1)
				h.Stop()
			}
		})
	}
	wg.Wait()
	h.Stop()

	require.NoError(t, h.Start(t.Context()))
	require.Error(t, h.Start(t.Context()), "a running hub refuses a second Start")
	h.Stop()
	h.Stop()                                                       // idempotent
	notify.New(openStore(t), slog.New(slog.DiscardHandler)).Stop() // safe before Start
}

// TestHubWakesAcrossBrokers: an announcement on one hub wakes a pop parked on another hub of the same
// database (through NOTIFY), and a hub wakes its own waiters without a round trip.
func TestHubWakesAcrossBrokers(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	a, b := notify.New(st, slog.New(slog.DiscardHandler)), notify.New(st, slog.New(slog.DiscardHandler))
	require.NoError(t, a.Start(t.Context()))
	defer a.Stop()
	require.NoError(t, b.Start(t.Context()))
	defer b.Stop()

	// The first wake-up may come from a's LISTEN connection coming up (it wakes every waiter, since
	// announcements sent before it listened are lost); the later ones can only come from b's NOTIFY.
	for range 3 {
		w := a.Park("q")
		require.Equal(t, 1, a.Parked())
		b.Announce("q", 1)
		<-w.C()
		a.Unpark(w)
	}
	require.Zero(t, a.Parked())

	w := b.Park(notify.AnyQueue)
	require.Equal(t, map[string]int{"*": 1}, b.ParkedByQueue())
	b.Announce("other", 1) // a local announcement wakes cross-queue waiters at once
	<-w.C()
	b.Unpark(w)
}

// TestHubCarriesChanges: a change announced on one hub reaches the OnChange function of another hub
// of the same database and not its own; each hub reports ChangesLost when its LISTEN session connects.
func TestHubCarriesChanges(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	a, b := notify.New(st, slog.New(slog.DiscardHandler)), notify.New(st, slog.New(slog.DiscardHandler))
	got := map[*notify.Hub]chan notify.Change{a: make(chan notify.Change, 16), b: make(chan notify.Change, 16)}
	for h, ch := range got {
		h.OnChange(func(c notify.Change) { ch <- c })
		require.NoError(t, h.Start(t.Context()))
		defer h.Stop()
		require.Equal(t, notify.Change{Kind: notify.ChangesLost}, <-ch, "the LISTEN session connected")
	}

	sent := []notify.Change{
		{Kind: notify.QueueConfigured, Name: "orders"},
		{Kind: notify.QueueDeleted, Name: "a queue: with spaces"},
		{Kind: notify.GroupDeleted, Name: "billing"},
	}
	for _, c := range sent {
		b.AnnounceChange(c)
	}
	var heard []notify.Change
	for range sent {
		heard = append(heard, <-got[a])
	}
	require.ElementsMatch(t, sent, heard)

	// a's own announcement and a pop announcement are no change to a; b hears the first.
	a.AnnounceChange(notify.Change{Kind: notify.QueueDeleted, Name: "mine"})
	a.Announce("orders", 1)
	require.Equal(t, notify.Change{Kind: notify.QueueDeleted, Name: "mine"}, <-got[b])
	b.AnnounceChange(notify.Change{Kind: notify.QueueConfigured, Name: "last"})
	require.Equal(t, notify.Change{Kind: notify.QueueConfigured, Name: "last"}, <-got[a],
		"a heard nothing else in between")
}
