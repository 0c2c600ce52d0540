package volume

import (
	"context"
	"errors"
	"fmt"

	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// VolumeOpRequest.Op values.
const (
	OpRequestCreate     = "create"
	OpRequestDelete     = "delete"
	OpRequestDetach     = "detach"
	OpRequestDeregister = "deregister"
)

// CodeConflict is the messages.Error code of a request that collides with
// the volume's state: a claim conflict (the message names the volume and
// the allocation holding it, as state.ClaimConflictError does), a claim being
// released, a volume in use or being deregistered, a create of a volume
// that exists. The other codes are cluster/remote's.
const CodeConflict = "conflict"

// ErrorOf turns an error of the volume actors into the messages.Error a
// requester gets; nil for nil.
func ErrorOf(err error) *messages.Error {
	if err == nil {
		return nil
	}
	var re *remote.RemoteError
	var ce *ControllerError
	code := remote.CodeInternal
	switch {
	case errors.As(err, &re):
		return &messages.Error{Code: re.Code, Message: re.Message, LeaderRPCAddr: re.LeaderRPCAddr}
	case errors.Is(err, cluster.ErrNotLeader):
		code = remote.CodeNotLeader
	case errors.Is(err, state.ErrVolumeNotFound):
		code = remote.CodeNotFound
	case errors.Is(err, state.ErrClaimConflict), errors.Is(err, state.ErrClaimReleasing), errors.Is(err, state.ErrModeMismatch),
		errors.Is(err, state.ErrVolumeInUse), errors.Is(err, ErrDeregistered):
		code = CodeConflict
	case errors.Is(err, state.ErrVolumeReadOnly), errors.Is(err, state.ErrInvalidClaim), errors.Is(err, state.ErrUnsupportedCapability),
		errors.Is(err, state.ErrInvalidVolume), errors.Is(err, state.ErrIllegalTransition):
		code = remote.CodeInvalid
	case errors.As(err, &ce):
		code = controllerCode(ce)
	case errors.Is(err, ErrNoController), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		code = remote.CodeUnavailable
	}
	return &messages.Error{Code: code, Message: err.Error()}
}

// controllerCode maps a plugin's refusal to what the API tells its user:
// the user's own mistakes are 4xx, not the server's 500.
func controllerCode(ce *ControllerError) string {
	switch {
	case ce.Retryable:
		return remote.CodeUnavailable
	case ce.Code == "InvalidArgument" || ce.Code == "OutOfRange":
		return remote.CodeInvalid
	case ce.Code == "AlreadyExists" || ce.Code == "FailedPrecondition":
		return CodeConflict
	case ce.Code == codeNotFound:
		return remote.CodeNotFound
	}
	return remote.CodeInternal
}

// notFound is the answer for a volume that is not registered.
func notFound(id string) *messages.Error {
	return &messages.Error{Code: remote.CodeNotFound, Message: fmt.Sprintf("volume %q not found", id)}
}

// failure is the response to request req carrying e: a
// VolumeClaimResponse for a claim, a VolumeOpResponse otherwise.
func failure(req any, e *messages.Error) any {
	if _, ok := req.(*messages.VolumeClaimRequest); ok {
		return &messages.VolumeClaimResponse{Error: e}
	}
	return &messages.VolumeOpResponse{Error: e}
}
