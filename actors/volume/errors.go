package volume

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test with errors.Is; the typed errors below wrap them.
var (
	// ErrClaimConflict: the claim does not fit next to the volume's other
	// claims (a second writer, a second node on a single-node volume, the
	// same allocation asking for a different claim). See ConflictError.
	ErrClaimConflict = errors.New("volume: claim conflict")
	// ErrReadOnly: a write claim on a reader-only access mode.
	ErrReadOnly = errors.New("volume: volume is read-only")
	// ErrInvalidClaim: a claim request missing a field or with an unknown mode.
	ErrInvalidClaim = errors.New("volume: invalid claim")
	// ErrUnsupportedCapability: the claim's access and attachment modes are
	// not among the volume's requested capabilities.
	ErrUnsupportedCapability = errors.New("volume: capability not supported by the volume")
	// ErrModeMismatch: the claim's modes differ from the ones in use.
	ErrModeMismatch = errors.New("volume: modes differ from the ones in use")
	// ErrClaimReleasing: the allocation's claim is being released.
	ErrClaimReleasing = errors.New("volume: claim is being released")
	// ErrIllegalTransition: a claim state change the table forbids.
	ErrIllegalTransition = errors.New("volume: illegal claim transition")
	// ErrUnknownState: a claim state that is not one of the five.
	ErrUnknownState = errors.New("volume: unknown claim state")
	// ErrVolumeInUse: deregister or delete of a volume that still has claims.
	ErrVolumeInUse = errors.New("volume: volume in use")
	// ErrUnexpectedResult: a controller result for no operation in flight.
	ErrUnexpectedResult = errors.New("volume: result for no operation in flight")
	// ErrDeregistered: the volume is being deregistered or deleted.
	ErrDeregistered = errors.New("volume: volume is deregistered")
	// ErrControllerFailed: a controller operation failed. See ControllerError.
	ErrControllerFailed = errors.New("volume: controller operation failed")
	// ErrNoController: no healthy controller instance on a live node.
	ErrNoController = errors.New("volume: no healthy controller instance on a live node")
)

// ConflictError names the volume and the allocation whose claim is in the
// way. It matches ErrClaimConflict.
type ConflictError struct {
	VolumeID string
	AllocID  string // the allocation holding the conflicting claim
	NodeID   string // its node
	Reason   string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v: volume %q: %s (held by alloc %q on node %q)",
		ErrClaimConflict, e.VolumeID, e.Reason, e.AllocID, e.NodeID)
}

// Is makes errors.Is(err, ErrClaimConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrClaimConflict }

// ControllerError is a failed controller operation, as told to a claim's
// waiter. Retryable says whether the same request may succeed later.
type ControllerError struct {
	Kind      string
	VolumeID  string
	AllocID   string
	Message   string
	Retryable bool
}

func (e *ControllerError) Error() string {
	return fmt.Sprintf("%v: %s of volume %q for alloc %q: %s (retryable: %t)",
		ErrControllerFailed, e.Kind, e.VolumeID, e.AllocID, e.Message, e.Retryable)
}

// Is makes errors.Is(err, ErrControllerFailed) true.
func (e *ControllerError) Is(target error) bool { return target == ErrControllerFailed }
