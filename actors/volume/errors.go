package volume

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
)

// The claim errors (a conflict, a read-only volume, an illegal claim state
// change, ...) are cluster/state's, where the claim rules live, and the
// FSM answers the same values: test with errors.Is(err,
// state.ErrClaimConflict) and friends, errors.As for a
// *state.ClaimConflictError.

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
