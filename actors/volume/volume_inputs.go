package volume

import (
	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Input is what VolumeState.Step accepts: one of the types below.
type Input interface{ isInput() }

// ClaimRequested: an allocation asks for a claim (NewClaim builds one).
// The answer comes in Effects.Replies, at once or after ControllerPublish.
type ClaimRequested struct{ Claim *messages.CSIVolumeClaim }

// ReleaseRequested: the allocation stops; its claim starts unpublishing.
type ReleaseRequested struct{ AllocID string }

// NodeDetached: the client unpublished (and unstaged) the volume for the
// allocation on its node.
type NodeDetached struct{ AllocID string }

// NodeAbandoned: the server gave up on the allocation's node plugin.
type NodeAbandoned struct{ AllocID string }

// ControllerPublished: ControllerPublish for the allocation's claim succeeded.
type ControllerPublished struct {
	AllocID        string
	PublishContext map[string]string
}

// ControllerDetached: ControllerUnpublish for the allocation's claim
// succeeded (NotFound counts as success).
type ControllerDetached struct{ AllocID string }

// ControllerFailed: the operation in flight for AllocID ("" for a
// volume-wide op such as delete) failed.
type ControllerFailed struct {
	AllocID   string
	Retryable bool
	Message   string
	Code      codes.Code // the plugin's gRPC code, OK when it did not answer
}

// RetryDue: the backoff after a failed ControllerUnpublish ran out.
type RetryDue struct{ AllocID string }

// DeregisterRequested: remove the volume. Without Force, only when it has
// no claim; with Force, only when no claim is taken (the others are dropped
// without a controller detach).
type DeregisterRequested struct{ Force bool }

// DeleteRequested: DeleteVolume through the controller, then deregister.
type DeleteRequested struct{}

// VolumeDeleted: DeleteVolume succeeded.
type VolumeDeleted struct{}

// VolumeUpdated: the stored volume changed (re-registered, plugin health);
// the state keeps its own claims and modes in use.
type VolumeUpdated struct{ Volume *messages.CSIVolume }

// Resume re-drives every claim that is mid-way, as after a leader change
// or an operator's detach. It is idempotent.
type Resume struct{}

func (ClaimRequested) isInput()      {}
func (ReleaseRequested) isInput()    {}
func (NodeDetached) isInput()        {}
func (NodeAbandoned) isInput()       {}
func (ControllerPublished) isInput() {}
func (ControllerDetached) isInput()  {}
func (ControllerFailed) isInput()    {}
func (RetryDue) isInput()            {}
func (DeregisterRequested) isInput() {}
func (DeleteRequested) isInput()     {}
func (VolumeDeleted) isInput()       {}
func (VolumeUpdated) isInput()       {}
func (Resume) isInput()              {}

// Effects is what the actor must do after a Step, in this order: propose
// the raft commands, submit the controller ops, schedule the retries,
// answer the replies, log the transitions and failures.
type Effects struct {
	Propose     []Proposal
	Controller  []*messages.ControllerOp
	Retry       []Retry
	Replies     []Reply
	Transitions []state.ClaimTransition
	// Failures are controller errors that no retry will fix; the claim
	// waits in node-detached for a Resume.
	Failures []error
}

// Proposal is one raft command; exactly one field is set.
type Proposal struct {
	Claim       *messages.ClaimVolume
	UpdateClaim *messages.UpdateClaimState
	Deregister  *messages.DeregisterVolume
}

// Retry asks for a RetryDue{AllocID} after ManagerSpec.Retry's Delay(Attempt, ...).
type Retry struct {
	AllocID string
	Attempt int
}

// Reply answers whoever waits on AllocID's claim ("" : a DeleteRequested):
// the usable claim, or an error.
type Reply struct {
	AllocID string
	Claim   *messages.CSIVolumeClaim
	Err     error
}
