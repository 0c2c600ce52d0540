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
	// errUnexpectedResult: a controller result for no operation in flight.
	errUnexpectedResult = errors.New("volume: result for no operation in flight")
	// errDeregistered: the volume is being deregistered or deleted.
	errDeregistered = errors.New("volume: volume is deregistered")
	// errControllerFailed: a controller operation failed. See controllerError.
	errControllerFailed = errors.New("volume: controller operation failed")
	// errNoController: no healthy controller instance on a live node.
	errNoController = errors.New("volume: no healthy controller instance on a live node")
)

// controllerError is a failed controller operation, as told to a claim's
// waiter. Retryable says whether the same request may succeed later.
type controllerError struct {
	Kind      string
	VolumeID  string
	AllocID   string
	Message   string
	Retryable bool
	Code      codes.Code // the plugin's gRPC code, OK when it did not answer
}

func (e *controllerError) Error() string {
	return fmt.Sprintf("%v: %s of volume %q for alloc %q: %s (retryable: %t)",
		errControllerFailed, e.Kind, e.VolumeID, e.AllocID, e.Message, e.Retryable)
}

// Is makes errors.Is(err, errControllerFailed) true.
func (e *controllerError) Is(target error) bool { return target == errControllerFailed }
