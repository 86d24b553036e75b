package engine

// plaintext returns a stored payload as the API shows it: decrypted when it was stored encrypted.
func (e *Engine) plaintext(payload []byte, encrypted bool) ([]byte, error) {
	if !encrypted {
		return payload, nil
	}
	return e.decryptStored(payload)
}

// decryptStored opens an at-rest encrypted payload with the broker's key.
func (e *Engine) decryptStored(payload []byte) ([]byte, error) {
	return nil, errNoKey
}
