package engine

import (
	"sync"
	"time"
)

// ttlCache is the engine's one cache: a map whose entries expire ttl after they were put (ttl 0: never)
// and which starts over empty when it would grow past max entries. Starting over is a cheap bound that
// costs nothing on the hot path; every user can afford a miss, which only costs a round-trip.
type ttlCache[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.RWMutex // protects m; a leaf: nothing else is locked while it is held
	m  map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v  V
	at time.Time
}

func newTTLCache[K comparable, V any](ttl time.Duration, max int, now func() time.Time) *ttlCache[K, V] {
	if now == nil {
		now = time.Now
	}
	return &ttlCache[K, V]{ttl: ttl, max: max, now: now, m: map[K]ttlEntry[V]{}}
}

// get returns k's value unless it is missing or expired.
func (c *ttlCache[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || (c.ttl > 0 && c.now().Sub(e.at) >= c.ttl) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put stores v under k.
func (c *ttlCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	c.bound(1)
	c.m[k] = ttlEntry[V]{v: v, at: c.now()}
	c.mu.Unlock()
}

// putAll stores every entry of m at once.
func (c *ttlCache[K, V]) putAll(m map[K]V) {
	c.mu.Lock()
	c.bound(len(m))
	at := c.now()
	for k, v := range m {
		c.m[k] = ttlEntry[V]{v: v, at: at}
	}
	c.mu.Unlock()
}

// bound empties the map when adding n entries would pass max. Callers hold mu.
func (c *ttlCache[K, V]) bound(n int) {
	if len(c.m)+n > c.max {
		c.m = map[K]ttlEntry[V]{}
	}
}

// forget drops the given keys.
func (c *ttlCache[K, V]) forget(keys ...K) {
	c.mu.Lock()
	for _, k := range keys {
		delete(c.m, k)
	}
	c.mu.Unlock()
}

// forgetIf drops every key match accepts.
func (c *ttlCache[K, V]) forgetIf(match func(K) bool) {
	c.mu.Lock()
	for k := range c.m {
		if match(k) {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

// clear drops every entry.
func (c *ttlCache[K, V]) clear() {
	c.mu.Lock()
	c.m = map[K]ttlEntry[V]{}
	c.mu.Unlock()
}

// len counts the entries, expired ones included.
func (c *ttlCache[K, V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// readThrough answers each key from the cache c, fetching the missing ones in one call and caching what
// the fetch returns; fetch must return every key it is given (or an error).
func readThrough[K comparable, V any](c interface {
	get(K) (V, bool)
	putAll(map[K]V)
}, keys []K, fetch func(missing []K) (map[K]V, error)) ([]V, error) {
	out := make([]V, len(keys))
	var missing []K
	var at []int
	for i, k := range keys {
		if v, ok := c.get(k); ok {
			out[i] = v
			continue
		}
		missing, at = append(missing, k), append(at, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	got, err := fetch(missing)
	if err != nil {
		return nil, err
	}
	c.putAll(got)
	for j, i := range at {
		out[i] = got[missing[j]]
	}
	return out, nil
}
