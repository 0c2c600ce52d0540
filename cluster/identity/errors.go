package identity

import "errors"

var (
	// ErrNoKey: the keyring has no active key to sign with.
	ErrNoKey = errors.New("identity: the keyring has no active root key")
	// ErrInvalid: the token is no JWT signed by a key of the keyring, or
	// its claims are not valid now (expired, not yet valid).
	ErrInvalid = errors.New("identity: invalid workload identity")
)
