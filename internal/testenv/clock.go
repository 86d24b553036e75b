package testenv

import (
	"sync"
	"time"
)

// Clock is the clock a test gives a broker (broker.Options{Clock: c.Now}) to decide leases, retry
// delays, delayed processing, window buffers and maxWaitTimeSeconds by: it runs with real time, and
// Advance moves it ahead, so a test makes a lease expire or a delay pass at once instead of waiting.
// It never runs behind real time, so an instant the database still records with its own clock is
// never in the clock's future.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// NewClock returns a clock that reads real time until advanced.
func NewClock() *Clock { return &Clock{} }

// Now is real time plus every Advance so far.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock d ahead (d < 0 is ignored: the clock never goes back).
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}
