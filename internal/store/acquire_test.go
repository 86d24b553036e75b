package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/store"
	"github.com/queen-go/queen/internal/testenv"
)

// A burst of requests larger than the pool can serve within the acquire timeout is a busy pool (500
// pool), not a database that cannot be reached (503): the connections free for a moment between one
// request and the next must not read as connections still being established.
func TestBusyPoolIsNotUnavailable(t *testing.T) {
	st, err := store.Open(t.Context(), store.Options{URL: testenv.SharedDatabase(t, "store"), PoolSize: 2, AcquireTimeout: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	pop := func() error {
		_, err := st.Pop(t.Context(), store.PopParams{Queue: uniq("no-such-queue"), Group: store.QueueMode, MaxPartitions: 1, Batch: 1, LeaseID: uuid.New()})
		return err
	}
	// The one connection of the hot pool is established before the burst: until then, the waits are
	// spent establishing it and do read as an unreachable database. On a loaded host establishing it
	// can take longer than one 20 ms acquire, so the warm-up pops until one is answered.
	require.Eventually(t, func() bool { return pop() == nil }, 30*time.Second, 10*time.Millisecond, "no connection established")
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Second)
	for range 128 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				err := pop()
				kind := "ok"
				switch {
				case errors.Is(err, store.ErrUnavailable):
					kind = "unavailable: " + err.Error()
				case errors.Is(err, store.ErrPool):
					kind = "pool"
				case err != nil:
					kind = err.Error()
				}
				mu.Lock()
				counts[kind]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Positive(t, counts["pool"], "the burst never outwaited the acquire timeout: %v", counts)
	require.Positive(t, counts["ok"], "%v", counts)
	require.Len(t, counts, 2, "only answers and busy-pool refusals: %v", counts)
}
