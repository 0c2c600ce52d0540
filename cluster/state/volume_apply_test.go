package state

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

func TestApplyClaimAndUpdateState(t *testing.T) {
	vol := testVolume("v", true)
	claim := testClaim("a1", "n1", ModeRead, messages.CSIAccessMultiNodeReader)
	claim.State = ClaimNodeDetached.String() // ignored: a new claim is taken
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: claim}, 7))
	require.Equal(t, "taken", vol.Claims[0].GetState())
	require.EqualValues(t, 7, vol.Claims[0].GetUpdatedAt())
	require.Equal(t, messages.CSIAccessMultiNodeReader, vol.GetAccessMode())
	require.NotSame(t, claim, vol.Claims[0], "the command's claim is copied")

	require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: "unpublishing",
		PublishContext: map[string]string{"k": "v"}, ControllerPublished: true}, 9))
	require.EqualValues(t, 9, vol.Claims[0].GetUpdatedAt())
	require.True(t, vol.Claims[0].GetControllerPublished())
	require.Equal(t, "v", vol.Claims[0].GetPublishContext()["k"])

	require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "zz", State: "freed"}, 9),
		"freeing a claim that is gone does nothing")
	require.Len(t, vol.Claims, 1)
	for _, st := range []string{"node-detached", "controller-detached", "freed"} {
		require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: st}, 10), st)
	}
	require.Empty(t, vol.Claims)
	require.Empty(t, vol.GetAccessMode(), "modes in use cleared with the last claim")
}

func TestApplyClaimVolumeIsIdempotent(t *testing.T) {
	vol := testVolume("v", true)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)}, 5))
	require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: "taken",
		PublishContext: map[string]string{"dev": "/dev/xvdf"}, ControllerPublished: true}, 6))
	before := proto.Clone(vol)

	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)}, 8))
	require.True(t, proto.Equal(before, vol), "the allocation's claim is kept as it was")
}

func TestApplyRefusalsChangeNothing(t *testing.T) {
	tests := []struct {
		name   string
		stored string // the state of a1's claim before the command
		apply  func(vol *messages.CSIVolume) error
		want   error
	}{
		{"second writer", "taken", func(v *messages.CSIVolume) error {
			return ApplyClaimVolume(v, &messages.ClaimVolume{Claim: testClaim("a2", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)}, 1)
		}, ErrClaimConflict},
		{"no claim", "taken", func(v *messages.CSIVolume) error {
			return ApplyClaimVolume(v, &messages.ClaimVolume{}, 1)
		}, ErrInvalidClaim},
		{"same alloc while releasing", "unpublishing", func(v *messages.CSIVolume) error {
			return ApplyClaimVolume(v, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)}, 1)
		}, ErrClaimReleasing},
		{"unknown state", "taken", func(v *messages.CSIVolume) error {
			return ApplyUpdateClaimState(v, &messages.UpdateClaimState{AllocationID: "a1", State: "lost"}, 1)
		}, ErrUnknownClaimState},
		{"unknown claim", "taken", func(v *messages.CSIVolume) error {
			return ApplyUpdateClaimState(v, &messages.UpdateClaimState{AllocationID: "zz", State: "unpublishing"}, 1)
		}, ErrClaimNotFound},
		{"skip the node step", "unpublishing", func(v *messages.CSIVolume) error {
			return ApplyUpdateClaimState(v, &messages.UpdateClaimState{AllocationID: "a1", State: "controller-detached"}, 1)
		}, ErrIllegalTransition},
		{"free a taken claim", "taken", func(v *messages.CSIVolume) error {
			return ApplyUpdateClaimState(v, &messages.UpdateClaimState{AllocationID: "a1", State: "freed"}, 1)
		}, ErrIllegalTransition},
		{"go back", "node-detached", func(v *messages.CSIVolume) error {
			return ApplyUpdateClaimState(v, &messages.UpdateClaimState{AllocationID: "a1", State: "unpublishing"}, 1)
		}, ErrIllegalTransition},
		{"stored state corrupt", "lost", func(v *messages.CSIVolume) error {
			return ApplyUpdateClaimState(v, &messages.UpdateClaimState{AllocationID: "a1", State: "unpublishing"}, 1)
		}, ErrUnknownClaimState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vol := testVolume("v", false)
			require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)}, 0))
			vol.Claims[0].State = tt.stored
			before := proto.Clone(vol)
			err := tt.apply(vol)
			require.ErrorIs(t, err, tt.want)
			require.ErrorContains(t, err, `"v"`, "the error names the volume")
			require.True(t, proto.Equal(before, vol))
		})
	}
}

func TestCheckVolumeUnused(t *testing.T) {
	tests := []struct {
		name   string
		states []string
		force  bool
		inUse  bool
	}{
		{"no claim", nil, false, false},
		{"taken", []string{"taken"}, false, true},
		{"taken, force", []string{"taken"}, true, true},
		{"releasing", []string{"unpublishing", "controller-detached"}, false, true},
		{"releasing, force", []string{"unpublishing", "controller-detached"}, true, false},
		{"mixed, force", []string{"node-detached", "taken"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vol := testVolume("v", false)
			for i, st := range tt.states {
				c := testClaim(string(rune('a'+i)), "n1", ModeRead, messages.CSIAccessMultiNodeReader)
				c.State = st
				vol.Claims = append(vol.Claims, c)
			}
			err := CheckVolumeUnused(vol, tt.force)
			if !tt.inUse {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrVolumeInUse)
			require.ErrorContains(t, err, `alloc "`)
		})
	}
}
