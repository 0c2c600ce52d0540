package agent

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// GossipKeyBytes decodes a gossip encryption key (-encrypt): base64 of
// 16, 24 or 32 bytes (AES-128, -192 or -256), as Nomad's. "" is no key.
func GossipKeyBytes(key string) ([]byte, error) {
	if key == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, fmt.Errorf("agent: -encrypt: the key is not base64: %w", err)
	}
	switch len(b) {
	case 16, 24, 32:
		return b, nil
	}
	return nil, fmt.Errorf("agent: -encrypt: the key is %d bytes; it must be 16, 24 or 32", len(b))
}

// NewGossipKey makes a random 32-byte gossip key, base64-encoded
// (`troupe operator gossip keyring -generate`).
func NewGossipKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
