package node

import "errors"

var (
	// ErrNoServer is returned when the client has no server to talk to.
	ErrNoServer = errors.New("node: no server reachable")
	// ErrIllegalStatusTransition is returned by NodeStatus.Step when an input
	// would move the node between two statuses that CanTransition forbids
	// (and by Suspicion.Step for a phase change its table forbids).
	ErrIllegalStatusTransition = errors.New("node: illegal status transition")
	// ErrInvalidStatusInput is returned by NodeStatus.Step (and
	// Suspicion.Step) for an input it
	// cannot use (unknown type, zero time, negative window).
	ErrInvalidStatusInput = errors.New("node: invalid status input")
	// ErrInvalidAllocEvent is returned by the client's allocation table
	// for an event it cannot use (unknown type, no allocation ID, a batch
	// answered with none in flight).
	ErrInvalidAllocEvent = errors.New("node: invalid allocation event")
)
