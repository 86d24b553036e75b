package testenv

import (
	"sync"
	"time"
)

// Clock is the clock a test gives a broker (broker.Options{Clock: c.Now}) to decide leases, retry
// delays, delayed processing, window buffers and maxWaitTimeSeconds by, so that a test makes a lease
// expire or a delay pass at once instead of waiting. It runs with real time, plus every Advance: it
// never runs behind real time, so an instant the database records with its own clock is never in the
// clock's future. A test that must know the clock's reading to the instant freezes it first.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	frozen *time.Time // set by Freeze: the reading, moved only by Advance
}

// NewClock returns a clock that reads real time until advanced.
func NewClock() *Clock { return &Clock{} }

// Now is the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen != nil {
		return *c.frozen
	}
	return time.Now().Add(c.offset)
}

// Advance moves the clock d ahead (d < 0 is ignored: the clock never goes back).
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen != nil {
		t := c.frozen.Add(d)
		c.frozen = &t
		return
	}
	c.offset += d
}

// Freeze stops the clock at its current reading; from then on only Advance moves it.
func (c *Clock) Freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen == nil {
		t := time.Now().Add(c.offset)
		c.frozen = &t
	}
}
