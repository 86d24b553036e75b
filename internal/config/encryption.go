package config

import (
	"fmt"

	"github.com/queen-go/queen/internal/crypto"
)

// EncryptionConfig holds the key of encryption at rest.
type EncryptionConfig struct {
	Key     *crypto.Key // nil: QUEEN_ENCRYPTION_KEY unset
	keyText string
}

func (c *Config) validateEncryption() error {
	k, err := crypto.ParseKey(c.Encryption.keyText)
	if err != nil {
		return fmt.Errorf("config: QUEEN_ENCRYPTION_KEY: %w", err)
	}
	c.Encryption.Key = k
	return nil
}
