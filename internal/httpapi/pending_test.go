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
	base := smStart(t, nil)

	t.Run("RotatesAcrossPartitions", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("rot")
		for _, p := range []string{"pa", "pb", "pc"} {
			for i := range 3 {
				smPush(t, a, q, p, fmt.Sprintf("%s-%d", p, i))
			}
		}
		// batch=1 pops take one message per claim; the claimed partition goes to the back of the line,
		// so the first three deliveries come from three different partitions (none waits for another
		// to empty).
		seen := map[string]bool{}
		for range 3 {
			m := smOne(t, a, smPopPath(q, "", "batch", "1"))
			seen[m.Partition] = true
			smAckOK(t, a, m, "completed", "")
		}
		require.Len(t, seen, 3, "one delivery from each partition first: %v", seen)
		require.Len(t, smDrain(t, a, q, ""), 6)
	})

	t.Run("RefilledAfterConsumedToTheEnd", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q := smName("refill")
		smPush(t, a, q, "p1", "a1")
		require.Equal(t, []string{"a1"}, smDrain(t, a, q, ""))
		smNoMessage(t, a, smPopPath(q, ""))
		// The partition left the line when its last message was acked; a new push puts it back.
		smPush(t, a, q, "p1", "a2")
		require.Equal(t, []string{"a2"}, smDrain(t, a, q, ""))
		// autoAck consumes at delivery and takes the partition out of the line too.
		smPush(t, a, q, "p1", "a3")
		require.Equal(t, "a3", smOne(t, a, smPopPath(q, "", "autoAck", "true")).TransactionID)
		smNoMessage(t, a, smPopPath(q, ""))
		smPush(t, a, q, "p1", "a4")
		require.Equal(t, []string{"a4"}, smDrain(t, a, q, ""))
	})

	t.Run("GroupSubscribingLateSeesEveryPartition", func(t *testing.T) {
		t.Parallel()
		a := newAPI(t, base)
		q, g := smName("late"), smName("glate")
		var want []string
		for i := range 30 {
			tx := fmt.Sprintf("m%02d", i)
			smPush(t, a, q, fmt.Sprintf("p%02d", i), tx)
			want = append(want, tx)
		}
		// The queue-mode group consumes everything first; the named group subscribes (mode all) only
		// now, and its first pop must still find all 30 partitions.
		require.Len(t, smDrain(t, a, q, ""), 30)
		require.Equal(t, want, smSorted(smDrain(t, a, q, g)))
		// Seeking back to the start puts them all back in the group's line.
		smJSON(t, a, "POST", "/api/v1/consumer-groups/"+g+"/queues/"+q+"/seek",
			map[string]any{"timestamp": "2000-01-01T00:00:00Z"}, http.StatusOK, nil)
		require.Equal(t, want, smSorted(smDrain(t, a, q, g)))
	})
}
