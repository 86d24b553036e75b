package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
)

// TestSamples covers queries/samples.sql: broker samples, their trimming and their reading. No other
// test writes samples; the hosts are this run's own, so that earlier -count runs do not count.
func TestSamples(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	ctx := t.Context()

	t.Run("BrokerSampleInsert+BrokerSampleList", func(t *testing.T) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		s := func(at time.Time, host, id string) store.BrokerSample {
			return store.BrokerSample{At: at, BrokerID: id, Hostname: host, Port: 6632, PID: 42, CPUUserPct: 1.5,
				CPUSysPct: 0.5, RSSMB: 64, Goroutines: 10, SchedLagAvgMs: 0.25, SchedLagMaxMs: 2, PoolSize: 10,
				PoolIdle: 7, PoolActive: 3, PoolWaiting: 1, Parked: 2, ParkedByQueue: map[string]int{"q": 2}}
		}
		h1, h2, h3 := uniq("h1"), uniq("h2"), uniq("h3")
		old := s(now.Add(-72*time.Hour), h1, "b1")
		require.NoError(t, st.Analytics().AddBrokerSample(ctx, old, 7))
		first := s(now.Add(-time.Minute), h1, "b1")
		first.ParkedByQueue = nil
		require.NoError(t, st.Analytics().AddBrokerSample(ctx, first, 7))
		require.NoError(t, st.Analytics().AddBrokerSample(ctx, s(now, h2, "b2"), 7))
		list := func(host, id string) []store.BrokerSample {
			t.Helper()
			got, err := st.Analytics().BrokerSamples(ctx, now.Add(-100*time.Hour), now, host, id)
			require.NoError(t, err)
			var out []store.BrokerSample
			for _, x := range got {
				if x.Hostname == h1 || x.Hostname == h2 || x.Hostname == h3 {
					out = append(out, x)
				}
			}
			return out
		}
		all := list("", "")
		require.Len(t, all, 3)
		require.True(t, all[0].At.Equal(old.At), "oldest first")
		got := all[2]
		want := s(now, h2, "b2")
		require.True(t, got.At.Equal(want.At))
		got.At = want.At
		require.Equal(t, want, got)
		require.Equal(t, map[string]int{}, all[1].ParkedByQueue, "no parked polls is an empty map")
		require.Len(t, list(h1, ""), 2)
		require.Len(t, list("", "b2"), 1)
		require.Empty(t, list(h1, "b2"))
		// Each insert trims every broker's samples older than keepDays.
		require.NoError(t, st.Analytics().AddBrokerSample(ctx, s(now, h3, "b3"), 1))
		all = list("", "")
		require.Len(t, all, 3)
		require.Equal(t, "b1", all[0].BrokerID)
		require.True(t, all[0].At.Equal(first.At), "the 3-day-old sample is gone")
	})
}
