package messages

import "fmt"

// ClaimState is where a volume claim is on its way from taken to freed
// (CSIVolumeClaim.State, UpdateClaimState.State). The fields stay strings
// on the wire, spelled as String spells them; Go code reads and writes
// them through ClaimState and SetClaimState and compares the values. The
// transition table is cluster/state's (state.CanClaimTransition).
type ClaimState int

// Claim states, in order. ClaimInvalid is what a field holding no known
// state (empty, or misspelt) reads as; it is never written.
const (
	ClaimTaken ClaimState = iota
	ClaimUnpublishing
	ClaimNodeDetached
	ClaimControllerDetached
	ClaimFreed

	ClaimInvalid ClaimState = -1
)

var claimStateNames = [...]string{"taken", "unpublishing", "node-detached", "controller-detached", "freed"}

func (s ClaimState) String() string {
	if s >= 0 && int(s) < len(claimStateNames) {
		return claimStateNames[s]
	}
	return fmt.Sprintf("claim-state(%d)", int(s))
}

// Valid reports whether s is one of the five claim states.
func (s ClaimState) Valid() bool { return s >= 0 && int(s) < len(claimStateNames) }

// ClaimStates lists every claim state, in order.
func ClaimStates() []ClaimState {
	return []ClaimState{ClaimTaken, ClaimUnpublishing, ClaimNodeDetached, ClaimControllerDetached, ClaimFreed}
}

// ParseClaimState reads a claim state as the State fields spell it;
// ClaimInvalid and false for anything else.
func ParseClaimState(name string) (ClaimState, bool) {
	for i, n := range claimStateNames {
		if n == name {
			return ClaimState(i), true
		}
	}
	return ClaimInvalid, false
}

// ClaimState is the claim's State (ClaimInvalid when unset or unknown).
func (x *CSIVolumeClaim) ClaimState() ClaimState {
	s, _ := ParseClaimState(x.GetState())
	return s
}

// SetClaimState sets the claim's State to s.
func (x *CSIVolumeClaim) SetClaimState(s ClaimState) { x.State = s.String() }

// ClaimState is the state the command moves its claim to (ClaimInvalid
// when unset or unknown).
func (x *UpdateClaimState) ClaimState() ClaimState {
	s, _ := ParseClaimState(x.GetState())
	return s
}
