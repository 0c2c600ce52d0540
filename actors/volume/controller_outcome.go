package volume

import (
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// outcome is what a finished controller op amounts to.
type outcome struct {
	ok        bool
	retryable bool
	message   string
	code      codes.Code // the plugin's gRPC code (OK when it did not answer)
}

// outcomeOf classifies an RPC's answer by its gRPC code; whether a
// failure is retryable is runtime/csi's decision (IsRetryableCode).
// Unreachable: every instance answered Unavailable. NotFound is a success for controller-unpublish and
// delete-volume (the work is done).
func outcomeOf(r *opRan, unreachable bool) outcome {
	code := r.resp.StatusCode()
	switch {
	case unreachable:
		return outcome{retryable: true, message: "no controller instance reachable: " + describe(r)}
	case r.err != nil || r.resp.GetError() != nil:
		return outcome{retryable: true, message: describe(r)}
	case code == codes.OK:
		return outcome{ok: true}
	case code == codes.NotFound && (r.op.GetKind() == opControllerUnpublish || r.op.GetKind() == opDeleteVolume):
		return outcome{ok: true}
	}
	return outcome{retryable: csi.IsRetryableCode(code), message: describe(r), code: code}
}

// describe is an RPC's failure in words.
func describe(r *opRan) string {
	switch {
	case r.err != nil:
		return r.err.Error()
	case r.resp.GetError() != nil:
		return fmt.Sprintf("%s: %s", r.resp.GetError().GetCode(), r.resp.GetError().GetMessage())
	}
	return fmt.Sprintf("%s: %s", r.resp.StatusCode(), r.resp.GetMessage())
}

// input is the volume actor's input for the outcome of op.
func (o outcome) input(op *messages.ControllerOp, resp *messages.ControllerResponse) input {
	if !o.ok {
		return controllerFailed{AllocID: op.GetAllocationID(), Retryable: o.retryable, Message: o.message, Code: o.code}
	}
	switch op.GetKind() {
	case opControllerPublish:
		return controllerPublished{AllocID: op.GetAllocationID(), PublishContext: resp.GetPublishContext()}
	case opControllerUnpublish:
		return controllerDetached{AllocID: op.GetAllocationID()}
	case opDeleteVolume:
		return volumeDeleted{}
	}
	return nil // expand and snapshots: no volume state to move
}

// err is the failed outcome as an error for a requester.
func (o outcome) err(op *messages.ControllerOp) error {
	return &controllerError{Kind: op.GetKind(), VolumeID: op.GetVolumeID(), AllocID: op.GetAllocationID(),
		Message: o.message, Retryable: o.retryable, Code: o.code}
}
