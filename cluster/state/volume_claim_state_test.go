package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestClaimTransitionTable checks every (from, to, reason) triple against
// the expected table; anything not listed must be illegal.
func TestClaimTransitionTable(t *testing.T) {
	legal := map[string]bool{
		"taken->unpublishing (release)":                              true,
		"unpublishing->node-detached (node-detached)":                true,
		"unpublishing->node-detached (node-abandoned)":               true,
		"unpublishing->node-detached (never-published)":              true,
		"node-detached->controller-detached (controller-detached)":   true,
		"node-detached->controller-detached (controller-not-needed)": true,
		"controller-detached->freed (free)":                          true,
	}
	n := 0
	for _, from := range ClaimStates() {
		for _, to := range ClaimStates() {
			for _, why := range ClaimReasons() {
				key := fmt.Sprintf("%s->%s (%s)", from, to, why)
				t.Run(key, func(t *testing.T) {
					require.Equal(t, legal[key], CanClaimTransition(from, to, why))
				})
				if legal[key] {
					n++
				}
			}
		}
	}
	require.Equal(t, len(legal), n, "every legal edge exists in the state and reason lists")
}

// The hard gate: nothing reaches the controller step from taken or
// unpublishing, whatever the reason.
func TestNoControllerStepBeforeNodeDetached(t *testing.T) {
	for _, from := range []ClaimState{ClaimTaken, ClaimUnpublishing} {
		for _, to := range []ClaimState{ClaimControllerDetached, ClaimFreed} {
			for _, why := range ClaimReasons() {
				require.False(t, CanClaimTransition(from, to, why), "%s->%s (%s)", from, to, why)
			}
		}
	}
}

func TestAdvanceClaimClaim(t *testing.T) {
	c := &messages.CSIVolumeClaim{AllocationID: "a1", State: "taken"}
	require.NoError(t, AdvanceClaim(c, ClaimUnpublishing, ReasonRelease))
	err := AdvanceClaim(c, ClaimControllerDetached, ReasonControllerDetached)
	require.ErrorIs(t, err, ErrIllegalTransition)
	require.ErrorContains(t, err, "unpublishing -> controller-detached")
	require.Equal(t, "unpublishing", c.GetState(), "a refused transition changes nothing")
	require.False(t, c.GetNodeAbandoned())

	require.NoError(t, AdvanceClaim(c, ClaimNodeDetached, ReasonNodeAbandoned))
	require.True(t, c.GetNodeAbandoned())
	require.Equal(t, "node-detached", c.GetState())

	require.ErrorIs(t, AdvanceClaim(&messages.CSIVolumeClaim{State: "lost"}, ClaimFreed, ReasonFree), ErrUnknownClaimState)
}

func TestClaimStateNames(t *testing.T) {
	for _, s := range ClaimStates() {
		got, err := ParseClaimState(s.String())
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	require.Equal(t, "claim-state(9)", ClaimState(9).String())
	require.Equal(t, "reason(-1)", ClaimReason(-1).String())
	require.Equal(t, "alloc a: taken -> unpublishing (release)",
		ClaimTransition{AllocID: "a", From: ClaimTaken, To: ClaimUnpublishing, Why: ReasonRelease}.String())
}
