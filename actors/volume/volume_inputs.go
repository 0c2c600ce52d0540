package volume

import (
	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// input is what volumeState.Step accepts: one of the types below.
type input interface{ isInput() }

// claimRequested: an allocation asks for a claim (newClaim builds one).
// The answer comes in Effects.Replies, at once or after ControllerPublish.
type claimRequested struct{ Claim *messages.CSIVolumeClaim }

// releaseRequested: the allocation stops; its claim starts unpublishing.
type releaseRequested struct{ AllocID string }

// nodeDetached: the client unpublished (and unstaged) the volume for the
// allocation on its node.
type nodeDetached struct{ AllocID string }

// nodeAbandoned: the server gave up on the allocation's node plugin.
type nodeAbandoned struct{ AllocID string }

// controllerPublished: ControllerPublish for the allocation's claim succeeded.
type controllerPublished struct {
	AllocID        string
	PublishContext map[string]string
}

// controllerDetached: ControllerUnpublish for the allocation's claim
// succeeded (NotFound counts as success).
type controllerDetached struct{ AllocID string }

// controllerFailed: the operation in flight for AllocID ("" for a
// volume-wide op such as delete) failed.
type controllerFailed struct {
	AllocID   string
	Retryable bool
	Message   string
	Code      codes.Code // the plugin's gRPC code, OK when it did not answer
}

// RetryDue: the backoff after a failed ControllerUnpublish ran out.
type RetryDue struct{ AllocID string }

// deregisterRequested: remove the volume. Without Force, only when it has
// no claim; with Force, only when no claim is taken (the others are dropped
// without a controller detach).
type deregisterRequested struct{ Force bool }

// deleteRequested: DeleteVolume through the controller, then deregister.
type deleteRequested struct{}

// volumeDeleted: DeleteVolume succeeded.
type volumeDeleted struct{}

// volumeUpdated: the stored volume changed (re-registered, plugin health);
// the state keeps its own claims and modes in use.
type volumeUpdated struct{ Volume *messages.CSIVolume }

// resume re-drives every claim that is mid-way, as after a leader change
// or an operator's detach. It is idempotent.
type resume struct{}

func (claimRequested) isInput()      {}
func (releaseRequested) isInput()    {}
func (nodeDetached) isInput()        {}
func (nodeAbandoned) isInput()       {}
func (controllerPublished) isInput() {}
func (controllerDetached) isInput()  {}
func (controllerFailed) isInput()    {}
func (RetryDue) isInput()            {}
func (deregisterRequested) isInput() {}
func (deleteRequested) isInput()     {}
func (volumeDeleted) isInput()       {}
func (volumeUpdated) isInput()       {}
func (resume) isInput()              {}

// effects is what the actor must do after a Step, in this order: propose
// the raft commands, submit the controller ops, schedule the retries,
// answer the replies, log the transitions and failures.
type effects struct {
	Propose     []proposal
	Controller  []*messages.ControllerOp
	Retry       []retry
	Replies     []reply
	Transitions []state.ClaimTransition
	// Failures are controller errors that no retry will fix; the claim
	// waits in node-detached for a Resume.
	Failures []error
}

// proposal is one raft command; exactly one field is set.
type proposal struct {
	Claim       *messages.ClaimVolume
	UpdateClaim *messages.UpdateClaimState
	Deregister  *messages.DeregisterVolume
}

// retry asks for a RetryDue{AllocID} after ManagerSpec.Retry's Delay(Attempt, ...).
type retry struct {
	AllocID string
	Attempt int
}

// reply answers whoever waits on AllocID's claim ("" : a deleteRequested):
// the usable claim, or an error.
type reply struct {
	AllocID string
	Claim   *messages.CSIVolumeClaim
	Err     error
}
