package messages

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClaimStateRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		state ClaimState
		name  string
	}{
		{ClaimTaken, "taken"},
		{ClaimUnpublishing, "unpublishing"},
		{ClaimNodeDetached, "node-detached"},
		{ClaimControllerDetached, "controller-detached"},
		{ClaimFreed, "freed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.name, tc.state.String(), "the wire spelling")
			require.True(t, tc.state.Valid())
			got, ok := ParseClaimState(tc.name)
			require.True(t, ok)
			require.Equal(t, tc.state, got)
			c := &CSIVolumeClaim{}
			c.SetClaimState(tc.state)
			require.Equal(t, tc.name, c.State)
			require.Equal(t, tc.state, c.ClaimState())
			require.Equal(t, tc.state, (&UpdateClaimState{State: tc.name}).ClaimState())
		})
	}
	require.Len(t, ClaimStates(), 5)
}

func TestClaimStateInvalid(t *testing.T) {
	for _, name := range []string{"", "Taken", "detached", "claim-state(-1)"} {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseClaimState(name)
			require.False(t, ok)
			require.Equal(t, ClaimInvalid, got)
			require.Equal(t, ClaimInvalid, (&CSIVolumeClaim{State: name}).ClaimState())
		})
	}
	var nilClaim *CSIVolumeClaim
	require.Equal(t, ClaimInvalid, nilClaim.ClaimState())
	require.False(t, ClaimInvalid.Valid())
	require.False(t, ClaimState(5).Valid())
	require.Equal(t, "claim-state(7)", ClaimState(7).String())
}
