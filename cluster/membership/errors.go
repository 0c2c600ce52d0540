package membership

import "errors"

var (
	// ErrInvalidConfig is returned by New for a configuration it cannot use.
	ErrInvalidConfig = errors.New("membership: invalid config")
	// ErrInvalidMeta is returned for metadata that fails validation (missing
	// identity, unknown role, a change to an immutable field) and is the
	// reason a peer whose metadata does not decode is refused.
	ErrInvalidMeta = errors.New("membership: invalid metadata")
	// ErrMetaTooLarge is returned by New and UpdateMeta when the encoded
	// metadata exceeds memberlist's limit (MetaMaxSize bytes).
	ErrMetaTooLarge = errors.New("membership: metadata too large")
	// ErrWrongRegion is the reason a peer from another region is refused.
	ErrWrongRegion = errors.New("membership: wrong region")
	// ErrNotServer is the reason a client is refused by the WAN pool.
	ErrNotServer = errors.New("membership: not a server")
	// ErrDuplicateName is the reason a peer is refused when a live member
	// already holds its node name with a different node ID.
	ErrDuplicateName = errors.New("membership: duplicate node name")
	// ErrDuplicateID is the reason a peer is refused when a live member with
	// another name already holds its node ID.
	ErrDuplicateID = errors.New("membership: duplicate node ID")
	// ErrJoin is wrapped by every per-address failure inside a *JoinError.
	ErrJoin = errors.New("membership: join failed")
	// ErrStart is returned by New when memberlist cannot start (the gossip
	// port is taken, the secret key is invalid).
	ErrStart = errors.New("membership: cannot start gossip")
	// ErrShutdown is returned by calls made after Shutdown.
	ErrShutdown = errors.New("membership: shut down")
	// ErrNoKeyring is returned by keyring operations when gossip is not
	// encrypted.
	ErrNoKeyring = errors.New("membership: gossip is not encrypted (no -encrypt key)")
	// ErrPrimaryKey is returned when asked to remove the key in use.
	ErrPrimaryKey = errors.New("membership: removing the primary key is not allowed")
	// ErrUnknownKey is returned when asked to use or remove a key that is
	// not installed.
	ErrUnknownKey = errors.New("membership: the key is not installed")
)

// refusals are the reasons this package refuses a peer. They are permanent:
// retrying a join that failed with one of them cannot succeed until the
// operator fixes the configuration.
var refusals = []error{ErrWrongRegion, ErrNotServer, ErrDuplicateName, ErrDuplicateID, ErrInvalidMeta}

// IsRefused reports whether err (typically from Join) says that a peer was
// refused for a configuration problem rather than being unreachable.
func IsRefused(err error) bool {
	for _, r := range refusals {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}
