package node

import "errors"

var (
	// errNoServer is returned when the client has no server to talk to.
	errNoServer = errors.New("node: no server reachable")
	// errIllegalStatusTransition is returned by nodeStatus.Step when an input
	// would move the node between two statuses that CanTransition forbids
	// (and by Suspicion.Step for a phase change its table forbids).
	errIllegalStatusTransition = errors.New("node: illegal status transition")
	// errInvalidStatusInput is returned by nodeStatus.Step (and
	// Suspicion.Step) for an input it
	// cannot use (unknown type, zero time, negative window).
	errInvalidStatusInput = errors.New("node: invalid status input")
	// errInvalidAllocEvent is returned by the client's allocation table
	// for an event it cannot use (unknown type, no allocation ID, a batch
	// answered with none in flight).
	errInvalidAllocEvent = errors.New("node: invalid allocation event")
	// ErrBadCores is returned by ParseCores for a malformed CPU list.
	ErrBadCores = errors.New("node: bad core list")
)
