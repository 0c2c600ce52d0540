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
		{messages.CSIAccessSingleNodeReader, r, r, same, ok},
		{messages.CSIAccessSingleNodeReader, r, r, other, conflict},
		{messages.CSIAccessSingleNodeReader, r, w, same, readOnly},
		{messages.CSIAccessSingleNodeReader, r, w, other, readOnly},

		{messages.CSIAccessSingleNodeWriter, r, r, same, ok},
		{messages.CSIAccessSingleNodeWriter, r, r, other, conflict},
		{messages.CSIAccessSingleNodeWriter, r, w, same, ok},
		{messages.CSIAccessSingleNodeWriter, r, w, other, conflict},
		{messages.CSIAccessSingleNodeWriter, w, r, same, ok},
		{messages.CSIAccessSingleNodeWriter, w, r, other, conflict},
		{messages.CSIAccessSingleNodeWriter, w, w, same, conflict},
		{messages.CSIAccessSingleNodeWriter, w, w, other, conflict},

		{messages.CSIAccessMultiNodeReader, r, r, same, ok},
		{messages.CSIAccessMultiNodeReader, r, r, other, ok},
		{messages.CSIAccessMultiNodeReader, r, w, same, readOnly},
		{messages.CSIAccessMultiNodeReader, r, w, other, readOnly},

		{messages.CSIAccessMultiNodeSingleWriter, r, r, same, ok},
		{messages.CSIAccessMultiNodeSingleWriter, r, r, other, ok},
		{messages.CSIAccessMultiNodeSingleWriter, r, w, same, ok},
		{messages.CSIAccessMultiNodeSingleWriter, r, w, other, ok},
		{messages.CSIAccessMultiNodeSingleWriter, w, r, same, ok},
		{messages.CSIAccessMultiNodeSingleWriter, w, r, other, ok},
		{messages.CSIAccessMultiNodeSingleWriter, w, w, same, conflict},
		{messages.CSIAccessMultiNodeSingleWriter, w, w, other, conflict},

		{messages.CSIAccessMultiNodeMultiWriter, r, r, same, ok},
		{messages.CSIAccessMultiNodeMultiWriter, r, r, other, ok},
		{messages.CSIAccessMultiNodeMultiWriter, r, w, same, ok},
		{messages.CSIAccessMultiNodeMultiWriter, r, w, other, ok},
		{messages.CSIAccessMultiNodeMultiWriter, w, r, same, ok},
		{messages.CSIAccessMultiNodeMultiWriter, w, r, other, ok},
		{messages.CSIAccessMultiNodeMultiWriter, w, w, same, ok},
		{messages.CSIAccessMultiNodeMultiWriter, w, w, other, ok},
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
	for _, access := range []string{messages.CSIAccessSingleNodeReader, messages.CSIAccessMultiNodeReader} {
		t.Run(access, func(t *testing.T) {
			_, err := ClaimsOf(testVolume("v", false)).Check(testClaim("a1", "n1", ModeWrite, access))
			require.ErrorIs(t, err, ErrVolumeReadOnly)
		})
	}
}

func TestConflictMessageNamesVolumeAndHolder(t *testing.T) {
	vol := testVolume("data-vol", false)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("alloc-holder", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)}, 0))
	_, err := ClaimsOf(vol).Check(testClaim("alloc-new", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter))
	require.ErrorIs(t, err, ErrClaimConflict)
	require.ErrorContains(t, err, `volume "data-vol"`)
	require.ErrorContains(t, err, `alloc "alloc-holder"`)
	require.NotContains(t, err.Error(), "alloc-new")
}

func TestClaimIsIdempotentPerAllocation(t *testing.T) {
	vol := testVolume("v", false)
	first := testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: first}, 0))

	got, err := ClaimsOf(vol).Check(testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter))
	require.NoError(t, err)
	require.Same(t, vol.Claims[0], got)
	require.Equal(t, 1, ClaimsOf(vol).Writers())

	_, err = ClaimsOf(vol).Check(testClaim("a1", "n1", ModeRead, messages.CSIAccessSingleNodeWriter))
	require.ErrorIs(t, err, ErrClaimConflict, "same alloc, other mode")

	vol.Claims[0].State = ClaimUnpublishing.String()
	_, err = ClaimsOf(vol).Check(testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter))
	require.ErrorIs(t, err, ErrClaimReleasing)
}

// A claim holds its slot until freed: a writer still detaching blocks the
// next writer; once freed, the slot is open.
func TestSlotHeldUntilFreed(t *testing.T) {
	vol := testVolume("v", false)
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeWrite, messages.CSIAccessMultiNodeSingleWriter)}, 0))
	for _, st := range []ClaimState{ClaimUnpublishing, ClaimNodeDetached, ClaimControllerDetached} {
		require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: st.String()}, 0))
		_, err := ClaimsOf(vol).Check(testClaim("a2", "n2", ModeWrite, messages.CSIAccessMultiNodeSingleWriter))
		require.ErrorIs(t, err, ErrClaimConflict, st.String())
	}
	require.NoError(t, ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: ClaimFreed.String()}, 0))
	require.Empty(t, vol.AccessMode, "modes in use cleared with the last claim")
	_, err := ClaimsOf(vol).Check(testClaim("a2", "n2", ModeWrite, messages.CSIAccessMultiNodeSingleWriter))
	require.NoError(t, err)
}

func TestClaimModesAndValidation(t *testing.T) {
	vol := testVolume("v", false)
	vol.RequestedCapabilities = []*messages.CSIVolumeCapability{{AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem}}
	cases := []struct {
		name string
		req  *messages.CSIVolumeClaim
		want error
	}{
		{"no alloc", testClaim("", "n1", ModeRead, messages.CSIAccessSingleNodeWriter), ErrInvalidClaim},
		{"no node", testClaim("a", "", ModeRead, messages.CSIAccessSingleNodeWriter), ErrInvalidClaim},
		{"bad mode", testClaim("a", "n1", "rw", messages.CSIAccessSingleNodeWriter), ErrInvalidClaim},
		{"bad access", testClaim("a", "n1", ModeRead, "any"), ErrInvalidClaim},
		{"bad attachment", &messages.CSIVolumeClaim{AllocationID: "a", NodeID: "n1", Mode: ModeRead,
			AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: "nfs"}, ErrInvalidClaim},
		{"capability not requested", testClaim("a", "n1", ModeRead, messages.CSIAccessMultiNodeReader), ErrUnsupportedCapability},
		{"fits", testClaim("a", "n1", ModeRead, messages.CSIAccessSingleNodeWriter), nil},
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
	require.NoError(t, ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", ModeRead, messages.CSIAccessMultiNodeMultiWriter)}, 0))
	require.Equal(t, messages.CSIAccessMultiNodeMultiWriter, vol.GetAccessMode())
	require.Equal(t, messages.CSIAttachFileSystem, vol.GetAttachmentMode())
	_, err := ClaimsOf(vol).Check(testClaim("a2", "n1", ModeRead, messages.CSIAccessMultiNodeReader))
	require.ErrorIs(t, err, ErrModeMismatch)
	block := testClaim("a3", "n1", ModeRead, messages.CSIAccessMultiNodeMultiWriter)
	block.AttachmentMode = messages.CSIAttachBlockDevice
	vol.RequestedCapabilities = nil // a volume without capabilities accepts any
	_, err = ClaimsOf(vol).Check(block)
	require.ErrorIs(t, err, ErrModeMismatch)
}
