package auth

import (
	"sync"
	"time"
)

// verifiedCache remembers the tokens that passed verification. Behind queen-proxy every request of a
// credential carries the same minted token, and verifying it again (decode, claims map, HMAC or RSA)
// took a tenth of the broker's CPU on the push path. What can change for a verified token is only
// time: exp is checked on every use; nbf and iat, once passed, stay passed. An entry lives at most
// verifiedTTL, so a key dropped from the JWKS stops verifying its tokens within that.
type verifiedCache struct {
	mu sync.RWMutex
	m  map[string]verified
}

type verified struct {
	p     Principal
	until time.Time // min(exp + leeway, verified + verifiedTTL)
}

const (
	verifiedTTL = time.Minute
	verifiedMax = 4096 // tokens; when full it starts over (a proxy mints one per credential and hour)
)

func (c *verifiedCache) get(token string, now time.Time) (Principal, bool) {
	c.mu.RLock()
	v, ok := c.m[token]
	c.mu.RUnlock()
	if !ok || !now.Before(v.until) {
		return Principal{}, false
	}
	return v.p, true
}

func (c *verifiedCache) put(token string, p Principal, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= verifiedMax {
		c.m = make(map[string]verified)
	}
	c.m[token] = verified{p: p, until: until}
}
