package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/queen-go/queen/internal/crypto"
	"github.com/queen-go/queen/internal/store"
)

// OpsOptions wire the operations surface into the engine: payload encryption and the observer of
// pushes, pops and acks (metrics).
type OpsOptions struct {
	Key      *crypto.Key // nil: no QUEEN_ENCRYPTION_KEY
	Observer Observer    // nil: none
	// EncryptionCacheTTL bounds how long this broker trusts its cached "is queue X encrypted" answer
	// when another broker reconfigures the queue (a local configure invalidates at once).
	EncryptionCacheTTL time.Duration
}

// Observer is told about every applied push, pop and ack (the metrics collectors implement it).
type Observer interface {
	Pushed(queue string, messages int)
	Popped(queue string, messages int, lagSeconds []float64)
	Acked(queue, status string, messages int)
}

// opsState is the engine's part of the operations surface.
type opsState struct {
	mu       sync.RWMutex // protects key, observer, encQ
	key      *crypto.Key
	observer Observer
	ttl      time.Duration
	encQ     map[string]encEntry
	counters opsCounters
}

type encEntry struct {
	enabled bool
	at      time.Time
}

// EnableOps installs the encryption key and the observer. It refuses to start when a queue in the
// database is encrypted and no key is configured: such a broker could neither seal new payloads nor
// open stored ones.
func (e *Engine) EnableOps(ctx context.Context, o OpsOptions) error {
	if o.Key == nil {
		any, err := e.st.AnyEncryptedQueue(ctx)
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		if any {
			return errors.New("engine: a queue has encryptionEnabled but " + crypto.KeyHint + " is not set")
		}
	}
	if o.EncryptionCacheTTL <= 0 {
		o.EncryptionCacheTTL = time.Second
	}
	e.ops.mu.Lock()
	e.ops.key, e.ops.observer, e.ops.ttl, e.ops.encQ = o.Key, o.Observer, o.EncryptionCacheTTL, map[string]encEntry{}
	e.ops.mu.Unlock()
	return nil
}

// CheckEncryption is configure's guard: encryption cannot be enabled on a broker without a key.
func (e *Engine) CheckEncryption(enabled bool) error {
	e.ops.mu.RLock()
	defer e.ops.mu.RUnlock()
	if enabled && e.ops.key == nil {
		return invalid("encryptionEnabled requires %s", crypto.KeyHint)
	}
	return nil
}

// ForgetQueueEncryption drops the cached encryption flag of a queue; configure calls it.
func (e *Engine) ForgetQueueEncryption(queue string) {
	e.ops.mu.Lock()
	delete(e.ops.encQ, queue)
	e.ops.mu.Unlock()
}

// queueEncrypted answers from the cache, reading the queue's flag when unknown or older than the TTL.
// A queue that does not exist yet (auto-created by this push) is not encrypted.
func (e *Engine) queueEncrypted(ctx context.Context, queue string) (bool, error) {
	e.ops.mu.RLock()
	ent, ok := e.ops.encQ[queue]
	ttl := e.ops.ttl
	e.ops.mu.RUnlock()
	if ok && time.Since(ent.at) < ttl {
		return ent.enabled, nil
	}
	enabled, err := e.st.QueueEncrypted(ctx, queue)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	e.ops.mu.Lock()
	if e.ops.encQ == nil {
		e.ops.encQ = map[string]encEntry{}
	}
	if len(e.ops.encQ) > 100_000 {
		clear(e.ops.encQ)
	}
	e.ops.encQ[queue] = encEntry{enabled: enabled, at: time.Now()}
	e.ops.mu.Unlock()
	return enabled, nil
}

// sealRow encrypts a row's payload when its queue is encrypted. Without a key the push fails: an
// encrypted queue never silently stores plaintext.
func (e *Engine) sealRow(ctx context.Context, queue string, r *store.PushRow) error {
	enc, err := e.queueEncrypted(ctx, queue)
	if err != nil || !enc {
		return err
	}
	e.ops.mu.RLock()
	key := e.ops.key
	e.ops.mu.RUnlock()
	if key == nil {
		return invalid("queue %q has encryptionEnabled but %s is not set", queue, crypto.KeyHint)
	}
	sealed, err := key.Encrypt(r.Payload)
	if err != nil {
		return err
	}
	r.Payload, r.Encrypted = sealed, true
	return nil
}

// DecryptPayload returns the plaintext of a stored payload (unchanged when not encrypted). Every read
// path that returns payloads goes through it.
func (e *Engine) DecryptPayload(stored []byte, encrypted bool) (json.RawMessage, error) {
	if len(stored) == 0 {
		return jsonNull, nil
	}
	if !encrypted {
		return stored, nil
	}
	e.ops.mu.RLock()
	key := e.ops.key
	e.ops.mu.RUnlock()
	pt, err := crypto.Decrypt(key, stored)
	if err != nil {
		return nil, fmt.Errorf("engine: decrypt payload: %w", err)
	}
	return pt, nil
}
