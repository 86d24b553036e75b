package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// maxJWKSBytes caps a JWKS response; real key sets are a few KiB.
const maxJWKSBytes = 1 << 20

// jwk is one usable verification key of a JWKS.
type jwk struct {
	kid string
	alg string // the key's "alg" member; "" = any algorithm of its type
	key any    // *rsa.PublicKey or ed25519.PublicKey
}

// fits reports whether the key can verify a token signed with alg.
func (k jwk) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	return keyFits(k.key, alg)
}

func keyFits(key any, alg string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// jwksCache holds the keys of JWT_JWKS_URL by kid. It is fetched when older than the refresh
// interval and once more when a token names a kid it does not hold. Concurrent refreshes coalesce
// into one fetch, so a burst of unknown kids costs one round trip at a time.
//
// Lock order: fetchMu before mu; mu is never held across the network round trip.
type jwksCache struct {
	url      string
	client   *http.Client
	timeout  time.Duration
	interval time.Duration
	log      *slog.Logger
	now      func() time.Time

	fetchMu sync.Mutex // serialises fetches; held while one is in flight

	mu          sync.RWMutex // protects the fields below
	keys        []jwk        // in document order: a token without kid uses the first that fits
	attemptedAt time.Time    // start of the last fetch, successful or not
	gen         uint64       // number of fetches finished
	lastErr     error        // result of the last fetch
}

var errJWKSFetch = &Error{Status: http.StatusInternalServerError, Message: "Failed to fetch JWKS"}

// lookup returns the key for a token's kid ("" = the first key that fits alg).
func (c *jwksCache) lookup(ctx context.Context, kid, alg string) (any, error) {
	c.mu.RLock()
	gen, stale := c.gen, c.attemptedAt.IsZero() || c.now().Sub(c.attemptedAt) >= c.interval
	c.mu.RUnlock()
	var refreshErr error
	if stale {
		// A failed periodic refresh keeps serving the cached keys.
		refreshErr = c.refresh(ctx, gen)
	}
	k, found := c.find(kid, alg)
	if !found {
		// One refresh for a key we do not hold (rotation), shared with concurrent requests; none
		// when this request has just refreshed.
		if !stale {
			refreshErr = c.refresh(ctx, gen)
		}
		if refreshErr != nil {
			return nil, errJWKSFetch
		}
		if k, found = c.find(kid, alg); !found {
			if kid == "" {
				return nil, &Error{Status: http.StatusUnauthorized, Message: "Unsupported algorithm: " + alg}
			}
			return nil, &Error{Status: http.StatusUnauthorized, Message: "Unknown key ID: " + kid}
		}
	}
	if !k.fits(alg) {
		return nil, errBadSignature
	}
	return k.key, nil
}

// find looks a kid up; without kid it returns the first key that fits alg.
func (c *jwksCache) find(kid, alg string) (jwk, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, k := range c.keys {
		if (kid != "" && k.kid == kid) || (kid == "" && k.fits(alg)) {
			return k, true
		}
	}
	return jwk{}, false
}

// refresh fetches the key set unless a fetch finished since the caller saw generation seen, in which
// case it returns that fetch's result.
func (c *jwksCache) refresh(ctx context.Context, seen uint64) error {
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	c.mu.Lock()
	if c.gen != seen {
		err := c.lastErr
		c.mu.Unlock()
		return err
	}
	c.attemptedAt = c.now()
	c.mu.Unlock()

	// The fetch serves every waiting request: the one that started it may go away meanwhile.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	defer cancel()
	keys, err := c.fetch(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.lastErr = err
	if err != nil {
		c.log.WarnContext(ctx, "jwks fetch failed", slog.String("url", c.url), slog.Any("error", err))
		return err
	}
	c.keys = keys
	c.log.DebugContext(ctx, "jwks fetched", slog.String("url", c.url), slog.Int("keys", len(keys)))
	return nil
}

func (c *jwksCache) fetch(ctx context.Context) ([]jwk, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: jwks request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: jwks fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("auth: jwks fetch: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("auth: jwks read: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("auth: jwks larger than %d bytes", maxJWKSBytes)
	}
	return parseJWKS(body)
}

// parseJWKS reads the RSA and Ed25519 signature keys of a JWKS document; other keys are skipped.
func parseJWKS(body []byte) ([]jwk, error) {
	var doc struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Use string `json:"use"`
			Alg string `json:"alg"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("auth: jwks: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New("auth: jwks: no keys member")
	}
	var out []jwk
	for _, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch {
		case k.Kty == "RSA":
			n, err1 := base64.RawURLEncoding.DecodeString(k.N)
			e, err2 := base64.RawURLEncoding.DecodeString(k.E)
			if err1 != nil || err2 != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
				continue
			}
			exp := int(new(big.Int).SetBytes(e).Int64())
			if exp < 3 {
				continue
			}
			out = append(out, jwk{kid: k.Kid, alg: k.Alg, key: &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}})
		case k.Kty == "OKP" && k.Crv == "Ed25519":
			x, err := base64.RawURLEncoding.DecodeString(k.X)
			if err != nil || len(x) != ed25519.PublicKeySize {
				continue
			}
			out = append(out, jwk{kid: k.Kid, alg: k.Alg, key: ed25519.PublicKey(x)})
		}
	}
	return out, nil
}
