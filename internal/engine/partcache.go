package engine

import (
	"sync"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/store"
)

// partitionCache remembers partition ids so a push to a known partition costs no lookup. Ids never
// change while a partition exists, so entries do not expire; the cache starts over when it would pass
// max entries. Unlike ttlCache it groups entries by queue, holding each queue name once and no
// timestamp per entry: at 100 000 partitions of one queue that is the difference between a broker
// under and over 64 MB of RSS (docs/performance.md).
type partitionCache struct {
	mu  sync.RWMutex // protects m and n; a leaf
	m   map[string]map[string]uuid.UUID
	n   int
	max int
}

func newPartitionCache(max int) *partitionCache {
	return &partitionCache{m: map[string]map[string]uuid.UUID{}, max: max}
}

func (c *partitionCache) get(k store.PartitionKey) (uuid.UUID, bool) {
	c.mu.RLock()
	id, ok := c.m[k.Queue][k.Partition]
	c.mu.RUnlock()
	return id, ok
}

// putAll stores every entry of m at once.
func (c *partitionCache) putAll(m map[store.PartitionKey]uuid.UUID) {
	c.mu.Lock()
	if c.n+len(m) > c.max {
		c.m, c.n = map[string]map[string]uuid.UUID{}, 0
	}
	for k, v := range m {
		parts := c.m[k.Queue]
		if parts == nil {
			parts = map[string]uuid.UUID{}
			c.m[k.Queue] = parts
		}
		if _, ok := parts[k.Partition]; !ok {
			c.n++
		}
		parts[k.Partition] = v
	}
	c.mu.Unlock()
}

// forget drops the given keys.
func (c *partitionCache) forget(keys ...store.PartitionKey) {
	c.mu.Lock()
	for _, k := range keys {
		if parts := c.m[k.Queue]; parts != nil {
			if _, ok := parts[k.Partition]; ok {
				delete(parts, k.Partition)
				c.n--
			}
		}
	}
	c.mu.Unlock()
}

// forgetQueue drops every partition of queue.
func (c *partitionCache) forgetQueue(queue string) {
	c.mu.Lock()
	c.n -= len(c.m[queue])
	delete(c.m, queue)
	c.mu.Unlock()
}
