package volume

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

func TestReadOnlyRequestTakesReadSlot(t *testing.T) {
	req := &messages.VolumeRequest{Source: "v", ReadOnly: true, AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem}
	c := newClaim("a1", "n1", "ext-n1", req)
	require.Equal(t, state.ModeRead, c.GetMode())
	require.Equal(t, "ext-n1", c.GetExternalNodeID())
	vol := testVolume("v", false)
	require.NoError(t, state.ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: c}, 0))
	require.Equal(t, 1, state.ClaimsOf(vol).Readers())
	require.Equal(t, 0, state.ClaimsOf(vol).Writers())
	_, err := state.ClaimsOf(vol).Check(testClaim("a2", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter))
	require.NoError(t, err, "the writer slot is still free")
	require.Equal(t, state.ModeWrite, claimMode(false))
}

// The aliases are the state package's values: errors.Is works across.
func TestClaimErrorsAreTheFSMs(t *testing.T) {
	s := newVolumeState(testVolume("v", false))
	step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	_, err := s.Step(claimRequested{Claim: testClaim("a2", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.ErrorIs(t, err, state.ErrClaimConflict)
	var ce *state.ClaimConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "a1", ce.AllocID)
}
