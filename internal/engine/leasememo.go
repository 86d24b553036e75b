package engine

import (
	"sync"

	"github.com/google/uuid"
)

// leaseMemo remembers which messages each lease this broker's pops handed out delivered, so that an ack
// of a whole lease, the common ack, looks no message up by transaction id (store.AckLeases). It is only
// a shortcut: a lease it does not know (popped through another broker, or forgotten) and an ack that is
// not the lease's messages in the order delivered take AckCompletions' path, which decides the same
// way. It holds at most max transaction ids and starts over when it would pass them, like
// partitionCache: a lease nobody acks stays until then.
type leaseMemo struct {
	mu    sync.Mutex // protects m and items; a leaf
	m     map[uuid.UUID]memoLease
	items int
	max   int
}

// memoLease is what one pop of one partition delivered.
type memoLease struct {
	partition     uuid.UUID
	group         string
	queue         string
	partitionName string
	txids         []string // in the order delivered
}

func newLeaseMemo(max int) *leaseMemo {
	return &leaseMemo{m: map[uuid.UUID]memoLease{}, max: max}
}

func (c *leaseMemo) put(id uuid.UUID, l memoLease) {
	if len(l.txids) == 0 || len(l.txids) > c.max {
		return
	}
	c.mu.Lock()
	if c.items+len(l.txids) > c.max {
		c.m, c.items = map[uuid.UUID]memoLease{}, 0
	}
	c.m[id] = l
	c.items += len(l.txids)
	c.mu.Unlock()
}

// take returns the lease and forgets it: an ack that names it settles it one way or the other.
func (c *leaseMemo) take(id uuid.UUID) (memoLease, bool) {
	c.mu.Lock()
	l, ok := c.m[id]
	if ok {
		delete(c.m, id)
		c.items -= len(l.txids)
	}
	c.mu.Unlock()
	return l, ok
}
