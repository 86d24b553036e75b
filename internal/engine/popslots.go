package engine

import (
	"context"
	"errors"
	"time"
)

// popSlots admits pops to the hot pool. Its size is the pool's connections less those the ack workers
// may hold, so that a burst of pops (thousands of long-polling consumers reconnecting at once) never
// leaves an ack without a connection. A long-poll waits for a slot up to its own deadline, as it would
// wait for a message: it has nothing to answer sooner. Any other pop waits at most the store's acquire
// timeout, then fails as an exhausted pool would.
type popSlots struct {
	sem     chan struct{}
	timeout time.Duration // a pop that does not wait: how long it waits for a slot before ErrPool
}

func newPopSlots(n int, timeout time.Duration) *popSlots {
	return &popSlots{sem: make(chan struct{}, max(n, 1)), timeout: timeout}
}

// take waits for a slot. It fails with ctx's error when ctx ends first, with ErrPool when a pop that
// does not wait has waited the acquire timeout, and with errDraining when the broker shuts down
// while a long-poll waits.
func (p *popSlots) take(ctx context.Context, wait bool, draining <-chan struct{}) error {
	select {
	case p.sem <- struct{}{}:
		return nil
	default:
	}
	var expired <-chan time.Time
	if !wait {
		draining = nil // only long-polls answer empty at shutdown; a plain pop keeps its turn
		t := time.NewTimer(p.timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case p.sem <- struct{}{}:
		return nil
	case <-expired:
		return ErrPool
	case <-ctx.Done():
		return ctx.Err()
	case <-draining:
		return errDraining
	}
}

func (p *popSlots) release() { <-p.sem }

// errDraining ends a wait for a pop slot when the broker shuts down.
var errDraining = errors.New("engine: shutting down")
