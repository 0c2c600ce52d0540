package state

import "errors"

var (
	// ErrJobNotFound is the Apply response to a deregister of an unknown job.
	ErrJobNotFound = errors.New("state: job not found")
	// ErrNodeNotFound is the Apply response to a status or eligibility
	// update of an unknown node.
	ErrNodeNotFound = errors.New("state: node not found")
	// ErrAllocNotFound is the Apply response to a StopAlloc of an unknown
	// allocation.
	ErrAllocNotFound = errors.New("state: allocation not found")
	// ErrBadCommand is the Apply response to a log entry that does not
	// decode or carries no known command.
	ErrBadCommand = errors.New("state: bad command")
	// ErrBadIndexArg is returned for an index lookup argument of the wrong type.
	ErrBadIndexArg = errors.New("state: bad index argument")
	// ErrBadSnapshot is returned by Restore for a stream that does not decode.
	ErrBadSnapshot = errors.New("state: bad snapshot")
)

// ErrPlacementRefused says why the FSM refused a plan's placement (logged;
// the plan result lists the refused IDs).
var ErrPlacementRefused = errors.New("state: placement refused")
