package csi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors. Errors that a plugin returned keep their gRPC status;
// use Code, IsNotFound, IsUnavailable and IsRetryable instead of matching
// text.
var (
	// ErrUnknownAccessMode: an access mode that troupe does not know.
	ErrUnknownAccessMode = errors.New("csi: unknown access mode")
	// ErrUnknownAttachmentMode: an attachment mode that troupe does not know.
	ErrUnknownAttachmentMode = errors.New("csi: unknown attachment mode")
	// ErrInvalidRequest: a request that is missing a required field; the
	// plugin is not called.
	ErrInvalidRequest = errors.New("csi: invalid request")
	// ErrDial: the plugin's socket could not be reached.
	ErrDial = errors.New("csi: cannot connect to plugin")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("csi: client closed")
)

// Code is the gRPC code that classifies err: OK for nil, the plugin's
// status code for an error the plugin returned (also when wrapped),
// Unavailable for ErrDial and ErrClosed, InvalidArgument for troupe's own
// validation errors, DeadlineExceeded or Canceled for bare context errors,
// and Unknown for anything else.
func Code(err error) codes.Code {
	switch {
	case err == nil:
		return codes.OK
	case errors.Is(err, ErrDial), errors.Is(err, ErrClosed):
		return codes.Unavailable
	case errors.Is(err, ErrInvalidRequest), errors.Is(err, ErrUnknownAccessMode),
		errors.Is(err, ErrUnknownAttachmentMode):
		return codes.InvalidArgument
	}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) && gs.GRPCStatus() != nil {
		return gs.GRPCStatus().Code()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}

// IsNotFound reports whether the plugin answered NotFound: the volume,
// node or target does not exist. For NodeUnpublish, NodeUnstage and
// ControllerUnpublish that means the work is already done.
func IsNotFound(err error) bool { return Code(err) == codes.NotFound }

// IsUnavailable reports whether the plugin instance could not be reached:
// codes.Unavailable, a dial failure or a closed client. Callers try another
// instance of the plugin.
func IsUnavailable(err error) bool { return Code(err) == codes.Unavailable }

// retryable is the classification table behind IsRetryable. A code that
// is not listed (OK included) is not retryable.
//
//	code               retryable  why
//	Unknown            yes        transport errors and plugin bugs may pass
//	Internal           yes        plugin-side failure, may heal
//	Unavailable        yes        instance down; retry (elsewhere)
//	DeadlineExceeded   yes        timed out; the operation may still finish
//	Aborted            yes        an operation is pending for the volume
//	ResourceExhausted  yes        e.g. max volumes on a node; may free up
//	Canceled           yes        the call was cut short, not refused
//	InvalidArgument    no         the request is wrong; it stays wrong
//	AlreadyExists      no         conflicts with an existing object
//	FailedPrecondition no         the volume is in the wrong state for it
//	OutOfRange         no         e.g. capacity out of range
//	NotFound           no         a definite answer; see IsNotFound
//	PermissionDenied   no         secrets or credentials are wrong
//	Unauthenticated    no         secrets or credentials are missing
//	Unimplemented      no         the plugin does not do this
//	DataLoss           no         unrecoverable
var retryable = map[codes.Code]bool{
	codes.Unknown:           true,
	codes.Internal:          true,
	codes.Unavailable:       true,
	codes.DeadlineExceeded:  true,
	codes.Aborted:           true,
	codes.ResourceExhausted: true,
	codes.Canceled:          true,
}

// IsRetryable reports whether the same call may succeed later without
// anyone changing the request or the volume (see the table on retryable).
// Callers whose policy is "retry everything but NotFound" (node unpublish)
// need not ask.
func IsRetryable(err error) bool { return err != nil && IsRetryableCode(Code(err)) }

// IsRetryableCode is IsRetryable for a gRPC code that travelled without
// its error (a controller RPC's answer, messages.ControllerResponse).
func IsRetryableCode(c codes.Code) bool { return retryable[c] }
