package volume

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/cluster/state"
)

// Claim errors are cluster/state's, where the claim rules live; the FSM
// answers the same values. Test with errors.Is.
var (
	// ErrClaimConflict: the claim does not fit next to the volume's other
	// claims. See ConflictError.
	ErrClaimConflict = state.ErrClaimConflict
	// ErrReadOnly: a write claim on a reader-only access mode.
	ErrReadOnly = state.ErrVolumeReadOnly
	// ErrInvalidClaim: a claim request missing a field or with an unknown mode.
	ErrInvalidClaim = state.ErrInvalidClaim
	// ErrUnsupportedCapability: the claim's modes are not among the
	// volume's requested capabilities.
	ErrUnsupportedCapability = state.ErrUnsupportedCapability
	// ErrModeMismatch: the claim's modes differ from the ones in use.
	ErrModeMismatch = state.ErrModeMismatch
	// ErrClaimReleasing: the allocation's claim is being released.
	ErrClaimReleasing = state.ErrClaimReleasing
	// ErrIllegalTransition: a claim state change the table forbids.
	ErrIllegalTransition = state.ErrIllegalTransition
	// ErrUnknownState: a claim state that is not one of the five.
	ErrUnknownState = state.ErrUnknownClaimState
	// ErrVolumeInUse: deregister or delete of a volume that still has claims.
	ErrVolumeInUse = state.ErrVolumeInUse
)

// ConflictError is state.ClaimConflictError: it names the volume and the
// allocation whose claim is in the way, and matches ErrClaimConflict.
type ConflictError = state.ClaimConflictError

// Sentinel errors of the volume and controller actors' own decisions.
var (
	// ErrUnexpectedResult: a controller result for no operation in flight.
	ErrUnexpectedResult = errors.New("volume: result for no operation in flight")
	// ErrDeregistered: the volume is being deregistered or deleted.
	ErrDeregistered = errors.New("volume: volume is deregistered")
	// ErrControllerFailed: a controller operation failed. See ControllerError.
	ErrControllerFailed = errors.New("volume: controller operation failed")
	// ErrNoController: no healthy controller instance on a live node.
	ErrNoController = errors.New("volume: no healthy controller instance on a live node")
)

// ControllerError is a failed controller operation, as told to a claim's
// waiter. Retryable says whether the same request may succeed later.
type ControllerError struct {
	Kind      string
	VolumeID  string
	AllocID   string
	Message   string
	Retryable bool
	Code      codes.Code // the plugin's gRPC code, OK when it did not answer
}

func (e *ControllerError) Error() string {
	return fmt.Sprintf("%v: %s of volume %q for alloc %q: %s (retryable: %t)",
		ErrControllerFailed, e.Kind, e.VolumeID, e.AllocID, e.Message, e.Retryable)
}

// Is makes errors.Is(err, ErrControllerFailed) true.
func (e *ControllerError) Is(target error) bool { return target == ErrControllerFailed }
