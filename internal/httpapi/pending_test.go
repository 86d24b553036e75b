package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Wildcard pops find work through each group's line of partitions with pending work
// (store migration 0006): these check the paths that put partitions into the line and take them out.
func TestPendingLine(t *testing.T) {
	t.Parallel()
	srv := setup(t, pollEnv(nil))

	t.Run("RotatesAcrossPartitions", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("rot")
		for _, p := range []string{"pa", "pb", "pc"} {
			for i := range 3 {
				a.pushTxs(q, p, fmt.Sprintf("%s-%d", p, i))
			}
		}
		// batch=1 pops take one message per claim; the claimed partition goes to the back of the line,
		// so the first three deliveries come from three different partitions (none waits for another
		// to empty).
		seen := map[string]bool{}
		for range 3 {
			m := a.popOne(popPath(q, "", "batch", "1"))
			seen[m.Partition] = true
			a.ackOK(m, "completed", "")
		}
		require.Len(t, seen, 3, "one delivery from each partition first: %v", seen)
		require.Len(t, a.drain(q, ""), 6)
	})

	t.Run("RefilledAfterConsumedToTheEnd", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q := uniqueName("refill")
		a.pushTxs(q, "p1", "a1")
		require.Equal(t, []string{"a1"}, a.drain(q, ""))
		a.popNone(popPath(q, ""))
		// The partition left the line when its last message was acked; a new push puts it back.
		a.pushTxs(q, "p1", "a2")
		require.Equal(t, []string{"a2"}, a.drain(q, ""))
		// autoAck consumes at delivery and takes the partition out of the line too.
		a.pushTxs(q, "p1", "a3")
		require.Equal(t, "a3", a.popOne(popPath(q, "", "autoAck", "true")).TransactionID)
		a.popNone(popPath(q, ""))
		a.pushTxs(q, "p1", "a4")
		require.Equal(t, []string{"a4"}, a.drain(q, ""))
	})

	t.Run("GroupSubscribingLateSeesEveryPartition", func(t *testing.T) {
		t.Parallel()
		a := srv.rawFor(t)
		q, g := uniqueName("late"), uniqueName("glate")
		var want []string
		for i := range 30 {
			tx := fmt.Sprintf("m%02d", i)
			a.pushTxs(q, fmt.Sprintf("p%02d", i), tx)
			want = append(want, tx)
		}
		// The queue-mode group consumes everything first; the named group subscribes (mode all) only
		// now, and its first pop must still find all 30 partitions.
		require.Len(t, a.drain(q, ""), 30)
		require.Equal(t, want, sorted(a.drain(q, g)))
		// Seeking back to the start puts them all back in the group's line.
		a.json("POST", "/api/v1/consumer-groups/"+g+"/queues/"+q+"/seek",
			map[string]any{"timestamp": "2000-01-01T00:00:00Z"}, http.StatusOK, nil)
		require.Equal(t, want, sorted(a.drain(q, g)))
	})
}
