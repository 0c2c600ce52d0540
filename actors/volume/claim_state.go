package volume

import "github.com/troupe-dev/troupe/cluster/state"

// ClaimState is state.ClaimState: where a claim is on its way from taken
// to freed (the transition table is state's, see state.CanClaimTransition).
type ClaimState = state.ClaimState

// Claim states, in order.
const (
	StateTaken              = state.ClaimTaken
	StateUnpublishing       = state.ClaimUnpublishing
	StateNodeDetached       = state.ClaimNodeDetached
	StateControllerDetached = state.ClaimControllerDetached
	StateFreed              = state.ClaimFreed
)

// Reason is state.ClaimReason: why a claim changes state.
type Reason = state.ClaimReason

// Reasons.
const (
	ReasonRelease             = state.ReasonRelease
	ReasonNodeDetached        = state.ReasonNodeDetached
	ReasonNodeAbandoned       = state.ReasonNodeAbandoned
	ReasonNeverPublished      = state.ReasonNeverPublished
	ReasonControllerDetached  = state.ReasonControllerDetached
	ReasonControllerNotNeeded = state.ReasonControllerNotNeeded
	ReasonFree                = state.ReasonFree
)

// Transition is state.ClaimTransition: one claim state change, to log.
type Transition = state.ClaimTransition
