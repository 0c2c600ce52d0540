package volume

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// gRPC code names as ControllerResponse.Code carries them.
const (
	codeOK          = "OK"
	codeUnavailable = "Unavailable"
	codeNotFound    = "NotFound"
)

// retryableCodes are the gRPC codes after which the same controller
// request may succeed later (runtime/csi's IsRetryable table; a test keeps
// them equal). An unknown code name counts as Unknown.
var retryableCodes = map[string]bool{
	"Unknown": true, "Internal": true, codeUnavailable: true, "DeadlineExceeded": true,
	"Aborted": true, "ResourceExhausted": true, "Canceled": true,
}

// knownCodes are the other gRPC code names.
var knownCodes = map[string]bool{
	codeOK: true, "InvalidArgument": true, codeNotFound: true, "AlreadyExists": true,
	"PermissionDenied": true, "FailedPrecondition": true, "OutOfRange": true,
	"Unimplemented": true, "DataLoss": true, "Unauthenticated": true,
}

// RetryableCode reports whether a controller answer with this gRPC code
// name may succeed when tried again.
func RetryableCode(code string) bool {
	return retryableCodes[code] || !knownCodes[code] && code != ""
}

// outcome is what a finished controller op amounts to.
type outcome struct {
	ok        bool
	retryable bool
	message   string
	code      string // the plugin's gRPC code name, when it answered one
}

// outcomeOf classifies an RPC's answer. Unreachable: every instance
// answered Unavailable. NotFound is a success for controller-unpublish and
// delete-volume (the work is done).
func outcomeOf(r *opRan, unreachable bool) outcome {
	code := r.resp.GetCode()
	switch {
	case unreachable:
		return outcome{retryable: true, message: "no controller instance reachable: " + describe(r)}
	case r.err != nil || r.resp.GetError() != nil:
		return outcome{retryable: true, message: describe(r)}
	case code == "" || code == codeOK:
		return outcome{ok: true}
	case code == codeNotFound && (r.op.GetKind() == OpControllerUnpublish || r.op.GetKind() == OpDeleteVolume):
		return outcome{ok: true}
	}
	return outcome{retryable: RetryableCode(code), message: describe(r), code: code}
}

// describe is an RPC's failure in words.
func describe(r *opRan) string {
	switch {
	case r.err != nil:
		return r.err.Error()
	case r.resp.GetError() != nil:
		return fmt.Sprintf("%s: %s", r.resp.GetError().GetCode(), r.resp.GetError().GetMessage())
	}
	return fmt.Sprintf("%s: %s", r.resp.GetCode(), r.resp.GetMessage())
}

// input is the volume actor's input for the outcome of op.
func (o outcome) input(op *messages.ControllerOp, resp *messages.ControllerResponse) Input {
	if !o.ok {
		return ControllerFailed{AllocID: op.GetAllocationID(), Retryable: o.retryable, Message: o.message, Code: o.code}
	}
	switch op.GetKind() {
	case OpControllerPublish:
		return ControllerPublished{AllocID: op.GetAllocationID(), PublishContext: resp.GetPublishContext()}
	case OpControllerUnpublish:
		return ControllerDetached{AllocID: op.GetAllocationID()}
	case OpDeleteVolume:
		return VolumeDeleted{}
	}
	return nil // expand and snapshots: no volume state to move
}

// err is the failed outcome as an error for a requester.
func (o outcome) err(op *messages.ControllerOp) error {
	return &ControllerError{Kind: op.GetKind(), VolumeID: op.GetVolumeID(), AllocID: op.GetAllocationID(),
		Message: o.message, Retryable: o.retryable, Code: o.code}
}
