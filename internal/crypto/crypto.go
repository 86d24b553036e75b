// Package crypto seals and opens message payloads at rest with AES-256-GCM, in the stored format of
// the original broker: {"encrypted":"<b64>","iv":"<b64 of 16 bytes>","authTag":"<b64 of 16 bytes>"}.
//
// The original encrypts with OpenSSL's GCM defaults: a 16-byte random IV is generated but only its
// first 12 bytes are the effective nonce, the tag is 16 bytes and there is no additional data. We
// write the same format, so rows written by either broker can be read by the other.
package crypto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// KeyHint is the text every error about a missing or malformed key carries.
const KeyHint = "QUEEN_ENCRYPTION_KEY (64 hex characters)"

// ErrNoKey is returned when a payload must be sealed or opened but no key is configured.
var ErrNoKey = errors.New("crypto: encryption requires " + KeyHint)

// Key is a parsed AES-256 key. The zero value (nil) means "no key configured".
type Key struct {
	aead cipher.AEAD
}

// ParseKey parses the 64 hex characters of QUEEN_ENCRYPTION_KEY. An empty string gives a nil key.
func ParseKey(s string) (*Key, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("crypto: want %s, got %d characters", KeyHint, len(s))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	aead, err := cipher.NewGCM(block) // 12-byte nonce, 16-byte tag: OpenSSL's GCM defaults
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	return &Key{aead: aead}, nil
}

// Sealed is the stored form of an encrypted payload.
type Sealed struct {
	Encrypted string `json:"encrypted"`
	IV        string `json:"iv"`
	AuthTag   string `json:"authTag"`
}

// Encrypt seals the JSON plaintext and returns the stored JSON object.
func (k *Key) Encrypt(plaintext []byte) ([]byte, error) {
	if k == nil {
		return nil, ErrNoKey
	}
	iv := make([]byte, 16)
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("crypto: iv: %w", err)
	}
	out := k.aead.Seal(nil, iv[:k.aead.NonceSize()], plaintext, nil)
	ct, tag := out[:len(out)-k.aead.Overhead()], out[len(out)-k.aead.Overhead():]
	return json.Marshal(Sealed{
		Encrypted: base64.StdEncoding.EncodeToString(ct),
		IV:        base64.StdEncoding.EncodeToString(iv),
		AuthTag:   base64.StdEncoding.EncodeToString(tag),
	})
}

// Decrypt takes a stored payload and returns the plaintext JSON. A payload that is not a sealed
// object is returned unchanged (rows written before a queue enabled encryption stay readable).
func (k *Key) Decrypt(stored []byte) ([]byte, error) {
	s, ok := parseSealed(stored)
	if !ok {
		return stored, nil
	}
	if k == nil {
		return nil, ErrNoKey
	}
	ct, err1 := base64.StdEncoding.DecodeString(s.Encrypted)
	iv, err2 := base64.StdEncoding.DecodeString(s.IV)
	tag, err3 := base64.StdEncoding.DecodeString(s.AuthTag)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("crypto: malformed sealed payload: %w", err)
	}
	if len(iv) < k.aead.NonceSize() || len(tag) != k.aead.Overhead() {
		return nil, errors.New("crypto: malformed sealed payload: bad iv or tag length")
	}
	pt, err := k.aead.Open(nil, iv[:k.aead.NonceSize()], append(ct, tag...), nil)
	if err != nil {
		return nil, fmt.Errorf("crypto: open payload (wrong key?): %w", err)
	}
	return pt, nil
}

// Decrypt is [Key.Decrypt] for callers holding a possibly nil key.
func Decrypt(k *Key, stored []byte) ([]byte, error) { return k.Decrypt(stored) }

// IsSealed reports whether a stored payload has the sealed shape.
func IsSealed(stored []byte) bool {
	_, ok := parseSealed(stored)
	return ok
}

func parseSealed(b []byte) (Sealed, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Sealed{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || len(m) != 3 {
		return Sealed{}, false
	}
	var s Sealed
	if json.Unmarshal(m["encrypted"], &s.Encrypted) != nil || json.Unmarshal(m["iv"], &s.IV) != nil ||
		json.Unmarshal(m["authTag"], &s.AuthTag) != nil {
		return Sealed{}, false
	}
	return s, true
}
