package broker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMemoryLimitFollowsConnections: the soft limit is the configured one plus room for each open
// connection, and moves when they open and close.
func TestMemoryLimitFollowsConnections(t *testing.T) {
	var open atomic.Int64
	var mu sync.Mutex
	var set []int64
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		followConnections(ctx, time.Millisecond, 40<<20, open.Load, func(n int64) {
			mu.Lock()
			set = append(set, n)
			mu.Unlock()
		})
	}()
	last := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		if len(set) == 0 {
			return -1
		}
		return set[len(set)-1]
	}
	require.Eventually(t, func() bool { return last() == 40<<20 }, 5*time.Second, time.Millisecond)
	open.Store(2000)
	require.Eventually(t, func() bool { return last() == 40<<20+2000*connMemory }, 5*time.Second, time.Millisecond)
	open.Store(0)
	require.Eventually(t, func() bool { return last() == 40<<20 }, 5*time.Second, time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, set, 3, "set only when the count changed")
}
