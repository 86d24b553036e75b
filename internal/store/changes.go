package store

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// changes are the partitions (and whole queues) whose counts this store's writes may have changed since
// it last handed them to the statistics pass (RefreshQueueStats, through stats_dirty). Noting them in
// memory costs the hot paths a map insert per statement, not a row per write; a broker that dies before
// its next hand-over loses its notes, which the pass's slow sweep over every partition makes good.
type changes struct {
	mu     sync.Mutex
	parts  map[uuid.UUID]struct{}
	queues map[string]struct{}
	all    bool
}

// note records the partitions of n items (part(i) is item i's): items of one statement mostly
// share their partition, so runs of one are noted once.
func (c *changes) note(n int, part func(i int) uuid.UUID) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parts == nil {
		c.parts = map[uuid.UUID]struct{}{}
	}
	prev := uuid.Nil
	for i := range n {
		if p := part(i); p != prev {
			c.parts[p], prev = struct{}{}, p
		}
	}
}

// notePartition records one partition.
func (c *changes) notePartition(id uuid.UUID) { c.note(1, func(int) uuid.UUID { return id }) }

// noteQueue records that every partition of a queue may have changed ("" with all: every queue).
func (c *changes) noteQueue(name string, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if all {
		c.all = true
		return
	}
	if c.queues == nil {
		c.queues = map[string]struct{}{}
	}
	c.queues[name] = struct{}{}
}

// merge adds o's notes to c's (a transaction's, once it committed).
func (c *changes) merge(o *changes) {
	o.mu.Lock()
	parts, queues, all := o.parts, o.queues, o.all
	o.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parts == nil {
		c.parts = map[uuid.UUID]struct{}{}
	}
	maps.Copy(c.parts, parts)
	if len(queues) > 0 && c.queues == nil {
		c.queues = map[string]struct{}{}
	}
	maps.Copy(c.queues, queues)
	c.all = c.all || all
}

// take empties c, returning what it held.
func (c *changes) take() (parts []uuid.UUID, queues []string, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	parts, queues, all = slices.Collect(maps.Keys(c.parts)), slices.Collect(maps.Keys(c.queues)), c.all
	c.parts, c.queues, c.all = nil, nil, false
	return parts, queues, all
}

// handOverChanges writes this store's notes to stats_dirty, where the broker running the next pass
// finds them; on failure they are kept for the next hand-over.
func (s *Store) handOverChanges(ctx context.Context) error {
	parts, queues, all := s.changed.take()
	if len(parts) == 0 && len(queues) == 0 && !all {
		return nil
	}
	if _, err := s.pool.Exec(ctx, q("StatsDirtyAdd"), parts, queues, all); err != nil {
		s.changed.note(len(parts), func(i int) uuid.UUID { return parts[i] })
		for _, name := range queues {
			s.changed.noteQueue(name, false)
		}
		if all {
			s.changed.noteQueue("", true)
		}
		return interpret(err)
	}
	return nil
}
