package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestAccessModeMatrix checks every access mode x existing claim (reader
// or writer) x new claim (reader or writer) x (same node or other node).
func TestAccessModeMatrix(t *testing.T) {
	const (
		r, w         = ModeRead, ModeWrite
		same, other  = "n1", "n2"
		ok, conflict = "ok", "conflict"
		readOnly     = "read-only"
	)
	cases := []struct {
		access, existing, req, node, want string
	}{
		{AccessSingleNodeReader, r, r, same, ok},
		{AccessSingleNodeReader, r, r, other, conflict},
		{AccessSingleNodeReader, r, w, same, readOnly},
		{AccessSingleNodeReader, r, w, other, readOnly},

		{AccessSingleNodeWriter, r, r, same, ok},
		{AccessSingleNodeWriter, r, r, other, conflict},
		{AccessSingleNodeWriter, r, w, same, ok},
		{AccessSingleNodeWriter, r, w, other, conflict},
		{AccessSingleNodeWriter, w, r, same, ok},
		{AccessSingleNodeWriter, w, r, other, conflict},
		{AccessSingleNodeWriter, w, w, same, conflict},
		{AccessSingleNodeWriter, w, w, other, conflict},

		{AccessMultiNodeReader, r, r, same, ok},
		{AccessMultiNodeReader, r, r, other, ok},
		{AccessMultiNodeReader, r, w, same, readOnly},
		{AccessMultiNodeReader, r, w, other, readOnly},

		{AccessMultiNodeSingleWriter, r, r, same, ok},
		{AccessMultiNodeSingleWriter, r, r, other, ok},
		{AccessMultiNodeSingleWriter, r, w, same, ok},
		{AccessMultiNodeSingleWriter, r, w, other, ok},
		{AccessMultiNodeSingleWriter, w, r, same, ok},
		{AccessMultiNodeSingleWriter, w, r, other, ok},
		{AccessMultiNodeSingleWriter, w, w, same, conflict},
		{AccessMultiNodeSingleWriter, w, w, other, conflict},

		{AccessMultiNodeMultiWriter, r, r, same, ok},
		{AccessMultiNodeMultiWriter, r, r, other, ok},
		{AccessMultiNodeMultiWriter, r, w, same, ok},
		{AccessMultiNodeMultiWriter, r, w, other, ok},
		{AccessMultiNodeMultiWriter, w, r, same, ok},
		{AccessMultiNodeMultiWriter, w, r, other, ok},
		{AccessMultiNodeMultiWriter, w, w, same, ok},
		{AccessMultiNodeMultiWriter, w, w, other, ok},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s/%s-then-%s/%s", tc.access, tc.existing, tc.req, tc.node)
		t.Run(name, func(t *testing.T) {
			vol := testVolume("vol1", false)
			require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{VolumeID: "vol1",
				Claim: testClaim("a1", same, tc.existing, tc.access)}, 0))
			existing, err := ClaimsOf(vol).Check(testClaim("a2", tc.node, tc.req, tc.access))
			require.Nil(t, existing)
			switch tc.want {
			case ok:
				require.NoError(t, err)
			case readOnly:
				require.ErrorIs(t, err, ErrVolumeReadOnly)
				require.ErrorContains(t, err, `"vol1"`)
			case conflict:
				require.ErrorIs(t, err, ErrClaimConflict)
				var ce *ClaimConflictError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, "a1", ce.AllocID)
				require.Equal(t, "vol1", ce.VolumeID)
			}
		})
	}
}

func TestFirstWriterOnReaderOnlyModes(t *testing.T) {
	for _, access := range []string{AccessSingleNodeReader, AccessMultiNodeReader} {
		t.Run(access, func(t *testing.T) {
			_, err := ClaimsOf(testVolume("v", false)).Check(testClaim("a1", "n1", ModeWrite, access))
			require.ErrorIs(t, err, ErrVolumeReadOnly)
		})
	}
}

func TestConflictMessageNamesVolumeAndHolder(t *testing.T) {
	vol := testVolume("data-vol", false)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("alloc-holder", "n1", ModeWrite, AccessSingleNodeWriter)}, 0))
	_, err := ClaimsOf(vol).Check(testClaim("alloc-new", "n1", ModeWrite, AccessSingleNodeWriter))
	require.ErrorIs(t, err, ErrClaimConflict)
	require.ErrorContains(t, err, `volume "data-vol"`)
	require.ErrorContains(t, err, `alloc "alloc-holder"`)
	require.NotContains(t, err.Error(), "alloc-new")
}

func TestClaimIsIdempotentPerAllocation(t *testing.T) {
	vol := testVolume("v", false)
	first := testClaim("a1", "n1", ModeWrite, AccessSingleNodeWriter)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: first}, 0))

	got, err := ClaimsOf(vol).Check(testClaim("a1", "n1", ModeWrite, AccessSingleNodeWriter))
	require.NoError(t, err)
	require.Same(t, vol.Claims[0], got)
	require.Equal(t, 1, ClaimsOf(vol).Writers())

	_, err = ClaimsOf(vol).Check(testClaim("a1", "n1", ModeRead, AccessSingleNodeWriter))
	require.ErrorIs(t, err, ErrClaimConflict, "same alloc, other mode")

	vol.Claims[0].State = ClaimUnpublishing.String()
	_, err = ClaimsOf(vol).Check(testClaim("a1", "n1", ModeWrite, AccessSingleNodeWriter))
	require.ErrorIs(t, err, ErrClaimReleasing)
}

// A claim holds its slot until freed: a writer still detaching blocks the
// next writer; once freed, the slot is open.
func TestSlotHeldUntilFreed(t *testing.T) {
	vol := testVolume("v", false)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeWrite, AccessMultiNodeSingleWriter)}, 0))
	for _, st := range []ClaimState{ClaimUnpublishing, ClaimNodeDetached, ClaimControllerDetached} {
		require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: st.String()}, 0))
		_, err := ClaimsOf(vol).Check(testClaim("a2", "n2", ModeWrite, AccessMultiNodeSingleWriter))
		require.ErrorIs(t, err, ErrClaimConflict, st.String())
	}
	require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: ClaimFreed.String()}, 0))
	require.Empty(t, vol.AccessMode, "modes in use cleared with the last claim")
	_, err := ClaimsOf(vol).Check(testClaim("a2", "n2", ModeWrite, AccessMultiNodeSingleWriter))
	require.NoError(t, err)
}

func TestClaimModesAndValidation(t *testing.T) {
	vol := testVolume("v", false)
	vol.RequestedCapabilities = []*messages.CSIVolumeCapability{{AccessMode: AccessSingleNodeWriter, AttachmentMode: AttachFilesystem}}
	cases := []struct {
		name string
		req  *messages.CSIVolumeClaim
		want error
	}{
		{"no alloc", testClaim("", "n1", ModeRead, AccessSingleNodeWriter), ErrInvalidClaim},
		{"no node", testClaim("a", "", ModeRead, AccessSingleNodeWriter), ErrInvalidClaim},
		{"bad mode", testClaim("a", "n1", "rw", AccessSingleNodeWriter), ErrInvalidClaim},
		{"bad access", testClaim("a", "n1", ModeRead, "any"), ErrInvalidClaim},
		{"bad attachment", &messages.CSIVolumeClaim{AllocationID: "a", NodeID: "n1", Mode: ModeRead,
			AccessMode: AccessSingleNodeWriter, AttachmentMode: "nfs"}, ErrInvalidClaim},
		{"capability not requested", testClaim("a", "n1", ModeRead, AccessMultiNodeReader), ErrUnsupportedCapability},
		{"fits", testClaim("a", "n1", ModeRead, AccessSingleNodeWriter), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ClaimsOf(vol).Check(tc.req)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestClaimMustMatchModesInUse(t *testing.T) {
	vol := testVolume("v", false)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeRead, AccessMultiNodeMultiWriter)}, 0))
	require.Equal(t, AccessMultiNodeMultiWriter, vol.GetAccessMode())
	require.Equal(t, AttachFilesystem, vol.GetAttachmentMode())
	_, err := ClaimsOf(vol).Check(testClaim("a2", "n1", ModeRead, AccessMultiNodeReader))
	require.ErrorIs(t, err, ErrModeMismatch)
	block := testClaim("a3", "n1", ModeRead, AccessMultiNodeMultiWriter)
	block.AttachmentMode = AttachBlockDevice
	vol.RequestedCapabilities = nil // a volume without capabilities accepts any
	_, err = ClaimsOf(vol).Check(block)
	require.ErrorIs(t, err, ErrModeMismatch)
}
