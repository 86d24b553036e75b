package broker

import (
	"context"
	"runtime/debug"
	"time"
)

// connMemory is what the soft memory limit grows by per open HTTP connection. Each holds memory no
// collection can free: its goroutine's stack and the server's read and write buffers, about 27 KiB
// each as measured (2 000 parked long-polls: 87 MB of RSS against 33 MB without them). Counted at
// more than twice that, so the heap keeps the room QUEEN_GC_PERCENT gives it. A fixed limit below what
// the connections hold kept the collector running without end: 2 000 idle consumers cost the broker
// 40 % of a core (docs/decisions.md "Collector settings").
const connMemory = 64 << 10

// followConnections sets the soft memory limit to base plus connMemory per open connection, checking
// every interval until ctx ends.
func followConnections(ctx context.Context, interval time.Duration, base int64, open func() int64, set func(int64)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := int64(-1)
	for {
		if n := max(open(), 0); n != last {
			set(base + n*connMemory)
			last = n
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// setMemoryLimit is debug.SetMemoryLimit without its result.
func setMemoryLimit(n int64) { debug.SetMemoryLimit(n) }
