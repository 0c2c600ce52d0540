package volume

import (
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// ClaimState is where a claim is on its way from taken to freed.
type ClaimState int

// Claim states, in order.
const (
	StateTaken ClaimState = iota
	StateUnpublishing
	StateNodeDetached
	StateControllerDetached
	StateFreed
)

var claimStateNames = [...]string{"taken", "unpublishing", "node-detached", "controller-detached", "freed"}

func (s ClaimState) String() string {
	if s >= 0 && int(s) < len(claimStateNames) {
		return claimStateNames[s]
	}
	return fmt.Sprintf("claim-state(%d)", int(s))
}

// ClaimStates lists every state, in order.
func ClaimStates() []ClaimState {
	return []ClaimState{StateTaken, StateUnpublishing, StateNodeDetached, StateControllerDetached, StateFreed}
}

// ParseClaimState reads a state as the claim's State field spells it.
func ParseClaimState(s string) (ClaimState, error) {
	for i, name := range claimStateNames {
		if name == s {
			return ClaimState(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownState, s)
}

// Reason is why a claim changes state. Each edge of the table accepts
// only some reasons; that is how the node-before-controller gate is kept.
type Reason int

// Reasons.
const (
	// ReasonRelease: the allocation stops (or is gone).
	ReasonRelease Reason = iota
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

func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Reasons lists every reason, in order.
func Reasons() []Reason {
	return []Reason{ReasonRelease, ReasonNodeDetached, ReasonNodeAbandoned, ReasonNeverPublished,
		ReasonControllerDetached, ReasonControllerNotNeeded, ReasonFree}
}

// claimTransitions is the whole table: from -> to -> the reasons that may
// take that edge. Anything absent is illegal. In particular there is no
// edge from taken or unpublishing past node-detached, and unpublishing ->
// node-detached needs the node's report, an abandoned node, or a claim
// that never reached the node: a failed node unmount holds the claim in
// unpublishing, so the controller is never asked to detach it.
var claimTransitions = map[ClaimState]map[ClaimState][]Reason{
	StateTaken:              {StateUnpublishing: {ReasonRelease}},
	StateUnpublishing:       {StateNodeDetached: {ReasonNodeDetached, ReasonNodeAbandoned, ReasonNeverPublished}},
	StateNodeDetached:       {StateControllerDetached: {ReasonControllerDetached, ReasonControllerNotNeeded}},
	StateControllerDetached: {StateFreed: {ReasonFree}},
	StateFreed:              {},
}

// CanTransition reports whether from -> to is legal for why.
func CanTransition(from, to ClaimState, why Reason) bool {
	return slices.Contains(claimTransitions[from][to], why)
}

// Advance moves c to state to for why, or returns ErrIllegalTransition
// and leaves c alone. ReasonNodeAbandoned marks c NodeAbandoned.
func Advance(c *messages.CSIVolumeClaim, to ClaimState, why Reason) error {
	from, err := ParseClaimState(c.GetState())
	if err != nil {
		return err
	}
	if !CanTransition(from, to, why) {
		return fmt.Errorf("%w: alloc %q: %s -> %s (%s)", ErrIllegalTransition, c.GetAllocationID(), from, to, why)
	}
	c.State = to.String()
	if why == ReasonNodeAbandoned {
		c.NodeAbandoned = true
	}
	return nil
}

// Transition records one claim state change, for the actor to log.
type Transition struct {
	AllocID  string
	From, To ClaimState
	Why      Reason
}

func (t Transition) String() string {
	return fmt.Sprintf("alloc %s: %s -> %s (%s)", t.AllocID, t.From, t.To, t.Why)
}
