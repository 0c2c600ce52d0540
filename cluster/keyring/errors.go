package keyring

import "errors"

var (
	// ErrKeyNotFound: the data names a key the keyring does not hold.
	ErrKeyNotFound = errors.New("keyring: root key not found")
	// ErrOpen: the data does not open with its key (a wrong key, or
	// ciphertext, nonce or path tampered with).
	ErrOpen = errors.New("keyring: variable does not decrypt")
	// ErrBadKey: a root key that is not 32 bytes.
	ErrBadKey = errors.New("keyring: bad root key")
)
