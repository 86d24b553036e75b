package notify

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScheduleCancelAndPostpone: what was scheduled under a key can be taken back one partition at a
// time or whole before it fires, and moved; a slot announces the partitions left in it. Every instant
// here is an hour away or already past, so nothing fires except what the test moves into the past.
func TestScheduleCancelAndPostpone(t *testing.T) {
	t.Parallel()
	type fired struct {
		queue string
		parts []string
	}
	got := make(chan fired, 10)
	s := newSchedule(func(q string, parts []string) {
		slices.Sort(parts)
		got <- fired{q, parts}
	})
	later := time.Now().Add(time.Hour)

	s.add("q", []string{"a", "b", "c"}, later, "lease-1") // a lease of three partitions
	s.add("q", []string{"d"}, later, "lease-2")           // same queue, same tick: one slot
	require.Equal(t, 1, s.len())
	s.cancel("lease-1", "b")   // one of lease-1's partitions acked
	s.cancel("lease-2", "")    // lease-2 acked whole
	s.cancel("unknown", "")    // a lease handed out by another broker: nothing to take back
	s.cancel("lease-1", "zzz") // not one of its partitions

	s.postpone("lease-1", time.Now().Add(-time.Second)) // moved into the past: it fires at once
	require.Equal(t, fired{"q", []string{"a", "c"}}, <-got)
	s.postpone("lease-1", later) // fired: nothing left to move
	s.cancel("lease-1", "")

	s.add("r", []string{"x"}, time.Now().Add(-time.Second), "") // unkeyed, due: fires
	require.Equal(t, fired{"r", []string{"x"}}, <-got)
	s.reset()
	require.Zero(t, s.len())
	select {
	case f := <-got:
		t.Fatalf("unexpected announcement %v", f)
	default:
	}
}

// TestWakeByPartition: a pop parked on a named partition is woken by announcements naming it or naming
// none, not by those naming other partitions; pops of any partition are woken up to the count.
func TestWakeByPartition(t *testing.T) {
	t.Parallel()
	w := newWaiters()
	p1, p2, anyP := w.addPartition("q", "p1"), w.addPartition("q", "p2"), w.add("q")
	woken := func(wt *Waiter) bool {
		select {
		case <-wt.C():
			return true
		default:
			return false
		}
	}
	w.wakeN("q", 1, []string{"p1"})
	require.Equal(t, []bool{true, false, true}, []bool{woken(p1), woken(p2), woken(anyP)})
	w.wakeN("other", 1, []string{"p1"})
	require.Equal(t, []bool{false, false, false}, []bool{woken(p1), woken(p2), woken(anyP)})
	w.wakeN("q", 0, nil) // partitions not known: every named pop of the queue
	require.Equal(t, []bool{true, true, false}, []bool{woken(p1), woken(p2), woken(anyP)})

	// Through NOTIFY payloads, names with the separators in them included.
	odd := "a:1:b"
	w.remove(p2)
	p3 := w.addPartition("q:x", odd)
	w.wakeNotified(payload("q:x", 1, []string{odd}))
	require.True(t, woken(p3))
	w.wakeNotified(payload("q", 1, []string{"p2"})) // a partition nobody here waits on: one pop of any partition
	require.Equal(t, []bool{false, true}, []bool{woken(p1), woken(anyP)})
	w.wakeNotified(payload("q", 1, nil))
	require.Equal(t, []bool{true, true}, []bool{woken(p1), woken(anyP)})
	w.wakeNotified("P2:1:q2:p1") // cut short: read as naming no partition of some queue, so nothing here
	require.Equal(t, map[string]int{"q": 2, "q:x": 1}, w.countByQueue())
	require.Equal(t, 3, w.count())

	q, parts, ok := parsePartitions(payload("q:x", 2, []string{odd, ""}))
	require.True(t, ok)
	require.Equal(t, "q:x", q)
	require.Equal(t, []string{odd, ""}, parts)
}
