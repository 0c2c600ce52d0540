package state

import (
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// ClaimState is messages.ClaimState: where a volume claim is on its way
// from taken to freed. This file holds its transition table.
type ClaimState = messages.ClaimState

// Claim states, in order.
const (
	ClaimTaken              = messages.ClaimTaken
	ClaimUnpublishing       = messages.ClaimUnpublishing
	ClaimNodeDetached       = messages.ClaimNodeDetached
	ClaimControllerDetached = messages.ClaimControllerDetached
	ClaimFreed              = messages.ClaimFreed
)

// ClaimStates lists every claim state, in order.
func ClaimStates() []ClaimState { return messages.ClaimStates() }

// ParseClaimState reads a state as the claim's State field spells it.
// Errors: ErrUnknownClaimState.
func ParseClaimState(s string) (ClaimState, error) {
	if st, ok := messages.ParseClaimState(s); ok {
		return st, nil
	}
	return messages.ClaimInvalid, fmt.Errorf("%w %q", ErrUnknownClaimState, s)
}

// ClaimReason is why a claim changes state. Each edge of the table accepts
// only some reasons; that is how the node-before-controller gate is kept.
type ClaimReason int

// Claim reasons.
const (
	// ReasonRelease: the allocation stops (or is gone).
	ReasonRelease ClaimReason = iota
	// ReasonNodeDetached: the client reported NodeUnpublish (and
	// NodeUnstage) done.
	ReasonNodeDetached
	// ReasonNodeAbandoned: the node plugin is abandoned (client down, GC'd,
	// or disconnected past stop_on_client_after); the claim is marked
	// NodeAbandoned.
	ReasonNodeAbandoned
	// ReasonNeverPublished: the claim was never handed to the node (its
	// ControllerPublish never succeeded), so the node has nothing mounted.
	ReasonNeverPublished
	// ReasonControllerDetached: ControllerUnpublish succeeded.
	ReasonControllerDetached
	// ReasonControllerNotNeeded: the volume needs no controller, or a live
	// claim on the same node still uses the attachment.
	ReasonControllerNotNeeded
	// ReasonFree: the claim is done and leaves the volume.
	ReasonFree
)

var reasonNames = [...]string{"release", "node-detached", "node-abandoned", "never-published",
	"controller-detached", "controller-not-needed", "free"}

func (r ClaimReason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// ClaimReasons lists every reason, in order.
func ClaimReasons() []ClaimReason {
	return []ClaimReason{ReasonRelease, ReasonNodeDetached, ReasonNodeAbandoned, ReasonNeverPublished,
		ReasonControllerDetached, ReasonControllerNotNeeded, ReasonFree}
}

// claimTransitions is the whole table: from -> to -> the reasons that may
// take that edge. Anything absent is illegal. In particular there is no
// edge from taken or unpublishing past node-detached, and unpublishing ->
// node-detached needs the node's report, an abandoned node, or a claim
// that never reached the node: a failed node unmount holds the claim in
// unpublishing, so the controller is never asked to detach it.
var claimTransitions = map[ClaimState]map[ClaimState][]ClaimReason{
	ClaimTaken:              {ClaimUnpublishing: {ReasonRelease}},
	ClaimUnpublishing:       {ClaimNodeDetached: {ReasonNodeDetached, ReasonNodeAbandoned, ReasonNeverPublished}},
	ClaimNodeDetached:       {ClaimControllerDetached: {ReasonControllerDetached, ReasonControllerNotNeeded}},
	ClaimControllerDetached: {ClaimFreed: {ReasonFree}},
	ClaimFreed:              {},
}

// CanClaimTransition reports whether from -> to is legal for why.
func CanClaimTransition(from, to ClaimState, why ClaimReason) bool {
	return slices.Contains(claimTransitions[from][to], why)
}

// claimEdge reports whether the table has an edge from -> to for any
// reason. The FSM checks this much: raft commands carry no reason (the
// volume actor checked it before proposing).
func claimEdge(from, to ClaimState) bool {
	return len(claimTransitions[from][to]) > 0
}

// AdvanceClaim moves c to state to for why, or returns
// ErrIllegalTransition and leaves c alone. ReasonNodeAbandoned marks c
// NodeAbandoned.
func AdvanceClaim(c *messages.CSIVolumeClaim, to ClaimState, why ClaimReason) error {
	from, err := ParseClaimState(c.GetState())
	if err != nil {
		return err
	}
	if !CanClaimTransition(from, to, why) {
		return fmt.Errorf("%w: alloc %q: %s -> %s (%s)", ErrIllegalTransition, c.GetAllocationID(), from, to, why)
	}
	c.SetClaimState(to)
	if why == ReasonNodeAbandoned {
		c.NodeAbandoned = true
	}
	return nil
}

// ClaimTransition records one claim state change, for logs.
type ClaimTransition struct {
	AllocID  string
	From, To ClaimState
	Why      ClaimReason
}

func (t ClaimTransition) String() string {
	return fmt.Sprintf("alloc %s: %s -> %s (%s)", t.AllocID, t.From, t.To, t.Why)
}
