package notify

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func woken(w *Waiter) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

// TestHandBackHeldUntilDue: a partition an ack released wakes this broker's parked pops only once the
// hand-back has passed, and not at all when a pop of the same group took it back meanwhile; a pop of
// another group does not count.
func TestHandBackHeldUntilDue(t *testing.T) {
	h := New(nil, slog.New(slog.DiscardHandler))
	h.handBack = time.Hour // the timer never fires here: hb.due stands in for it

	w := h.Park("q")
	defer h.Unpark(w)
	h.AnnounceReleased("q", "g", []string{"p1", "p2"})
	require.False(t, woken(w), "held back")
	gen := h.hb.gen

	h.Claimed("q", "g", []string{"p1"})     // its previous holder came back for it
	h.Claimed("q", "other", []string{"p2"}) // another group's claim leaves g's hold alone
	require.Equal(t, []string{"p2"}, h.hb.due("q", "g", []string{"p1", "p2"}, gen))
	require.Empty(t, h.hb.due("q", "g", []string{"p1", "p2"}, gen), "due once")

	// A later release of the same partition takes it over: the earlier timer finds nothing to do.
	h.AnnounceReleased("q", "g", []string{"p2"})
	require.Empty(t, h.hb.due("q", "g", []string{"p2"}, gen))
	require.Equal(t, []string{"p2"}, h.hb.due("q", "g", []string{"p2"}, h.hb.gen))
}

// TestHandBackWakes: with the real timer, a parked pop is woken for a released partition nobody took back.
func TestHandBackWakes(t *testing.T) {
	h := New(nil, slog.New(slog.DiscardHandler))
	w := h.ParkPartition("q", "p1")
	defer h.Unpark(w)
	h.AnnounceReleased("q", "g", []string{"p1"})
	select {
	case <-w.C():
	case <-time.After(10 * time.Second):
		t.Fatal("a released partition nobody claimed never woke its parked pop")
	}
	require.Empty(t, h.hb.held)
}

// TestHandBackNobodyParked: with no pop parked there is nothing to hold back, and the empty memo
// forgets the partitions at once either way.
func TestHandBackNobodyParked(t *testing.T) {
	h := New(nil, slog.New(slog.DiscardHandler))
	h.handBack = time.Hour
	h.waiters.memoAge = time.Minute
	h.waiters.memo = map[string]map[string]memoGroups{"q": {"p1": {"g": &emptyEntry{}}}}
	h.waiters.memoLen = 1
	h.AnnounceReleased("q", "g", []string{"p1"})
	require.Empty(t, h.hb.held)
	require.Zero(t, h.waiters.memoLen)

	w := h.Park("q")
	defer h.Unpark(w)
	h.waiters.memo = map[string]map[string]memoGroups{"q": {"p1": {"g": &emptyEntry{}}}}
	h.waiters.memoLen = 1
	h.AnnounceReleased("q", "g", []string{"p1"})
	require.Len(t, h.hb.held, 1)
	require.Zero(t, h.waiters.memoLen, "forgotten before the hand-back")
	require.False(t, woken(w))
}
