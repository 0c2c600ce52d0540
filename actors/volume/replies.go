package volume

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// VolumeOpRequest.Op values.
const (
	opRequestCreate     = "create"
	opRequestDelete     = "delete"
	opRequestDetach     = "detach"
	opRequestDeregister = "deregister"
)

// errorOf turns an error of the volume actors into the messages.Error a
// requester gets; nil for nil. A request that collides with the volume's
// state gets messages.CodeConflict: a claim conflict (the message names the
// volume and the allocation holding it, as state.ClaimConflictError does), a claim
// being released, a volume in use or being deregistered, a create of a
// volume that exists.
func errorOf(err error) *messages.Error {
	if err == nil {
		return nil
	}
	var re *remote.RemoteError
	var ce *controllerError
	code := messages.CodeInternal
	switch {
	case errors.As(err, &re):
		return &messages.Error{Code: re.Code, Message: re.Message, LeaderRPCAddr: re.LeaderRPCAddr}
	case errors.Is(err, cluster.ErrNotLeader):
		code = messages.CodeNotLeader
	case errors.Is(err, state.ErrVolumeNotFound):
		code = messages.CodeNotFound
	case errors.Is(err, state.ErrClaimConflict), errors.Is(err, state.ErrClaimReleasing), errors.Is(err, state.ErrModeMismatch),
		errors.Is(err, state.ErrVolumeInUse), errors.Is(err, errDeregistered):
		code = messages.CodeConflict
	case errors.Is(err, state.ErrVolumeReadOnly), errors.Is(err, state.ErrInvalidClaim), errors.Is(err, state.ErrUnsupportedCapability),
		errors.Is(err, state.ErrInvalidVolume), errors.Is(err, state.ErrIllegalTransition):
		code = messages.CodeInvalid
	case errors.As(err, &ce):
		code = controllerCode(ce)
	case errors.Is(err, errNoController), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		code = messages.CodeUnavailable
	}
	return messages.NewError(code, err.Error())
}

// controllerCode maps a plugin's refusal to what the API tells its user:
// the user's own mistakes are 4xx, not the server's 500.
func controllerCode(ce *controllerError) messages.ErrorCode {
	switch {
	case ce.Retryable:
		return messages.CodeUnavailable
	case ce.Code == codes.InvalidArgument || ce.Code == codes.OutOfRange:
		return messages.CodeInvalid
	case ce.Code == codes.AlreadyExists || ce.Code == codes.FailedPrecondition:
		return messages.CodeConflict
	case ce.Code == codes.NotFound:
		return messages.CodeNotFound
	}
	return messages.CodeInternal
}

// notFound is the answer for a volume that is not registered.
func notFound(id string) *messages.Error {
	return messages.Errorf(messages.CodeNotFound, "volume %q not found", id)
}

// failure is the response to request req carrying e: a
// VolumeClaimResponse for a claim, a VolumeOpResponse otherwise.
func failure(req any, e *messages.Error) any {
	if _, ok := req.(*messages.VolumeClaimRequest); ok {
		return &messages.VolumeClaimResponse{Error: e}
	}
	return &messages.VolumeOpResponse{Error: e}
}
