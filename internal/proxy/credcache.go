package proxy

import (
	"maps"
	"sync"
	"time"

	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// credCacheMax bounds the resolved credentials kept; a full cache drops its expired entries, then all.
const credCacheMax = 10_000

// credKey is what one request presents: the Host it names and the hash of its credential.
type credKey struct {
	host string
	sum  [32]byte
}

// credEntry is a resolved credential and the token minted for it. The entry lives far shorter than the
// token (the cache's TTL is capped at half the JWT's), so one token serves every request of the entry.
type credEntry struct {
	cluster proxystore.Cluster
	cred    proxystore.Credential
	token   string
	until   time.Time
}

// credCache keeps resolved credentials for a few seconds: without it every request read its cluster and
// key from the proxy's database. Only successes are kept, so a revocation, a suspension or a plan change
// made through another instance or the CLI takes effect within the TTL; this instance's admin API
// clears the cache at once.
type credCache struct {
	ttl time.Duration // 0: nothing is kept
	mu  sync.Mutex
	m   map[credKey]*credEntry
}

func newCredCache(ttl time.Duration) *credCache {
	return &credCache{ttl: ttl, m: map[credKey]*credEntry{}}
}

func (c *credCache) get(k credKey, now time.Time) *credEntry {
	if c.ttl <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil || !now.Before(e.until) {
		return nil
	}
	return e
}

func (c *credCache) put(k credKey, e *credEntry, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	e.until = now.Add(c.ttl)
	if x := e.cred.Expires; !x.IsZero() && x.Before(e.until) {
		e.until = x // a session is not served past its end
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	makeRoom(c.m, 1, credCacheMax, now, func(e *credEntry) time.Time { return e.until })
	c.m[k] = e
}

// makeRoom is the full-cache policy of the proxy's caches: when m cannot take need more entries within
// max, its expired entries go, and if that is not enough, all of them.
func makeRoom[K comparable, V any](m map[K]V, need, max int, now time.Time, until func(V) time.Time) {
	if len(m)+need <= max {
		return
	}
	maps.DeleteFunc(m, func(_ K, v V) bool { return !now.Before(until(v)) })
	if len(m)+need > max {
		clear(m)
	}
}

func (c *credCache) clear() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}
