package proxy

import (
	"sync"
	"time"

	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// knownCacheMax bounds the partitions kept; a full cache drops its expired entries, then all.
const knownCacheMax = 100_000

type knownKey struct {
	cluster          int64
	queue, partition string
}

// knownCache remembers partitions this instance has found in known_partitions, so that a push to
// partitions that already exist (nearly every push) passes the plan's ceilings and skips the record
// without a round trip: the ceilings' reads count every queue of the cluster and list every partition of
// the pushed queues. Pushing to an existing partition creates nothing, so a remembered partition is wrong
// only after its queue was deleted through another instance; entries live as long as cached credentials
// (QUEEN_PROXY_CACHE_MS), which bounds how long such a push is let through uncounted.
type knownCache struct {
	ttl time.Duration // 0: nothing is kept
	mu  sync.Mutex
	m   map[knownKey]time.Time // until
}

func newKnownCache(ttl time.Duration) *knownCache {
	return &knownCache{ttl: ttl, m: map[knownKey]time.Time{}}
}

// all reports whether every partition in ps is remembered for the cluster.
func (c *knownCache) all(cluster int64, ps []proxystore.QueuePartition, now time.Time) bool {
	if c.ttl <= 0 || len(ps) == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range ps {
		until, ok := c.m[knownKey{cluster, p.Queue, p.Partition}]
		if !ok || !now.Before(until) {
			return false
		}
	}
	return true
}

func (c *knownCache) add(cluster int64, ps []proxystore.QueuePartition, now time.Time) {
	if c.ttl <= 0 || len(ps) == 0 {
		return
	}
	until := now.Add(c.ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	makeRoom(c.m, len(ps), knownCacheMax, now, func(u time.Time) time.Time { return u })
	for _, p := range ps {
		c.m[knownKey{cluster, p.Queue, p.Partition}] = until
	}
}

// forgetQueue drops the cluster's partitions of one queue (it was deleted).
func (c *knownCache) forgetQueue(cluster int64, queue string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if k.cluster == cluster && k.queue == queue {
			delete(c.m, k)
		}
	}
}
