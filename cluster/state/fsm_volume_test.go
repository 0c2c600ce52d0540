package state

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// claimedHarness has volume "v" registered (index 1) and claimed by a1 on
// n1 as a single-node writer (index 2).
func claimedHarness(t *testing.T) *harness {
	h := newHarness(t)
	require.Nil(t, h.apply(registerVolume(testVolume("v", false))))
	require.Nil(t, h.apply(claimVolume("v", testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter))))
	return h
}

func TestRegisterVolume(t *testing.T) {
	moved := testVolume("v", false)
	moved.PluginID = "other"
	external := testVolume("v", false)
	external.ExternalID = "ext-new"
	narrowed := testVolume("v", false)
	narrowed.RequestedCapabilities = []*messages.CSIVolumeCapability{{AccessMode: messages.CSIAccessMultiNodeReader, AttachmentMode: messages.CSIAttachFileSystem}}
	resized := testVolume("v", false)
	resized.Parameters = map[string]string{"tier": "fast"}
	noID := testVolume("", false)
	noPlugin := testVolume("v", false)
	noPlugin.PluginID = ""
	badCap := testVolume("v", false)
	badCap.RequestedCapabilities = []*messages.CSIVolumeCapability{{AccessMode: "any", AttachmentMode: messages.CSIAttachFileSystem}}
	elsewhere := testVolume("v", false)
	elsewhere.Namespace = "prod"
	tests := []struct {
		name    string
		claimed bool
		update  *messages.CSIVolume
		want    error
	}{
		{"update of an unclaimed volume may move it", false, moved, nil},
		{"update of a claimed volume keeps its claims", true, resized, nil},
		{"claimed: plugin ID cannot change", true, moved, ErrVolumeInUse},
		{"claimed: external ID cannot change", true, external, ErrVolumeInUse},
		{"claimed: the capability in use stays", true, narrowed, ErrVolumeInUse},
		{"no ID", false, noID, ErrInvalidVolume},
		{"no plugin ID", false, noPlugin, ErrInvalidVolume},
		{"unknown capability", false, badCap, ErrInvalidVolume},
		{"ID used in another namespace", false, elsewhere, ErrInvalidVolume},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			first := testVolume("v", false)
			first.Capacity = 1 << 30
			require.Nil(t, h.apply(registerVolume(first)))
			if tt.claimed {
				require.Nil(t, h.apply(claimVolume("v", testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter))))
			}
			if tt.update.Namespace == "prod" {
				require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "prod"})))
			}
			before := h.snap().CSIVolumeByID("default", "v")
			events := len(h.events)

			res := h.apply(&messages.Command{Time: testNow + 9, Cmd: registerVolume(proto.Clone(tt.update).(*messages.CSIVolume)).Cmd})
			got := h.snap().CSIVolumeByID("default", "v")
			if tt.want != nil {
				require.ErrorIs(t, res.(error), tt.want)
				if tt.update.ID != "" {
					require.ErrorContains(t, res.(error), `"v"`, "the error names the volume")
				}
				require.Same(t, before, got, "a refused register changes nothing")
				require.Len(t, h.events, events, "and publishes nothing")
				return
			}
			require.Nil(t, res)
			require.Equal(t, tt.update.PluginID, got.PluginID)
			require.Equal(t, tt.update.Parameters, got.Parameters)
			require.EqualValues(t, 1, got.CreateIndex)
			require.Equal(t, testNow, got.CreateTime)
			require.Equal(t, h.index, got.ModifyIndex)
			require.Equal(t, testNow+9, got.ModifyTime)
			require.EqualValues(t, 1<<30, got.Capacity, "capacity set at create is kept")
			require.Equal(t, claimStates(before), claimStates(got))
			require.Equal(t, before.AccessMode, got.AccessMode)
			require.Equal(t, []string{"v"}, h.lastEvent().VolumesChanged)
		})
	}
}

func TestRegisterNewVolume(t *testing.T) {
	h := newHarness(t)
	require.Nil(t, h.apply(upsertPlugins("n1", nil, []*messages.CSIInfo{testInstance("hostpath", true)})))
	v := testVolume("v", true)
	v.Namespace = ""
	v.Claims = []*messages.CSIVolumeClaim{testClaim("ghost", "n1", ModeRead, messages.CSIAccessMultiNodeReader)}
	v.AccessMode, v.Schedulable = messages.CSIAccessMultiNodeReader, false
	require.Nil(t, h.apply(registerVolume(v)))

	require.Nil(t, h.snap().CSIVolumeByID("", "v"))
	got := h.snap().CSIVolumeByID("default", "v")
	require.NotNil(t, got, "no namespace means default")
	require.Same(t, got, h.snap().CSIVolumeAnyNamespace("v"))
	require.Empty(t, got.Claims, "a new volume starts unclaimed")
	require.Empty(t, got.AccessMode)
	require.Equal(t, []uint64{2, 2}, []uint64{got.CreateIndex, got.ModifyIndex})
	require.False(t, got.Schedulable, "the plugin needs a controller and has none")
	require.True(t, got.ControllerRequired)
	require.EqualValues(t, 1, got.NodesHealthy)
	require.Equal(t, "troupe.hostpath", got.Provider)
}

func TestDeregisterVolume(t *testing.T) {
	tests := []struct {
		name   string
		states []ClaimState // a1's claim moves through these first
		force  bool
		want   error
	}{
		{"taken claim refuses", nil, false, ErrVolumeInUse},
		{"force still refuses a taken claim", nil, true, ErrVolumeInUse},
		{"releasing claim refuses", []ClaimState{ClaimUnpublishing}, false, ErrVolumeInUse},
		{"force drops a releasing claim", []ClaimState{ClaimUnpublishing, ClaimNodeDetached}, true, nil},
		{"freed claim is gone", []ClaimState{ClaimUnpublishing, ClaimNodeDetached, ClaimControllerDetached, ClaimFreed}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := claimedHarness(t)
			for _, st := range tt.states {
				require.Nil(t, h.apply(updateClaim("v", "a1", st)))
			}
			res := h.apply(deregisterVolume("v", tt.force))
			if tt.want != nil {
				require.ErrorIs(t, res.(error), tt.want)
				require.ErrorContains(t, res.(error), `alloc "a1"`)
				require.NotNil(t, h.snap().CSIVolumeByID("default", "v"))
				return
			}
			require.Nil(t, res)
			require.Nil(t, h.snap().CSIVolumeByID("default", "v"))
			require.Empty(t, h.snap().CSIVolumes())
			require.Equal(t, []string{"v"}, h.lastEvent().VolumesChanged)
			require.Equal(t, h.index, h.snap().Index(TableCSIVolumes))
		})
	}
	h := newHarness(t)
	require.ErrorIs(t, h.apply(deregisterVolume("nope", true)).(error), ErrVolumeNotFound)
}

func TestClaimVolumeCommand(t *testing.T) {
	tests := []struct {
		name    string
		claim   *messages.CSIVolumeClaim
		volume  string
		want    error
		claims  int
		changed bool
	}{
		{"a reader on the same node", testClaim("a2", "n1", ModeRead, messages.CSIAccessSingleNodeWriter), "v", nil, 2, true},
		{"same claim again is idempotent", testClaim("a1", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter), "v", nil, 1, false},
		{"second writer conflicts", testClaim("a2", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter), "v", ErrClaimConflict, 1, false},
		{"other node conflicts", testClaim("a2", "n2", ModeRead, messages.CSIAccessSingleNodeWriter), "v", ErrClaimConflict, 1, false},
		{"other modes", testClaim("a2", "n1", ModeRead, messages.CSIAccessMultiNodeReader), "v", ErrModeMismatch, 1, false},
		{"invalid claim", testClaim("", "n1", ModeRead, messages.CSIAccessSingleNodeWriter), "v", ErrInvalidClaim, 1, false},
		{"unknown volume", testClaim("a2", "n1", ModeRead, messages.CSIAccessSingleNodeWriter), "w", ErrVolumeNotFound, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := claimedHarness(t)
			before := h.snap().CSIVolumeByID("default", "v")
			events := len(h.events)
			res := h.apply(&messages.Command{Time: testNow + 5, Cmd: claimVolume(tt.volume, tt.claim).Cmd})
			got := h.snap().CSIVolumeByID("default", "v")
			require.Len(t, got.Claims, tt.claims)
			if tt.want != nil {
				require.ErrorIs(t, res.(error), tt.want)
				require.Same(t, before, got)
				require.Len(t, h.events, events)
				return
			}
			require.Nil(t, res)
			if !tt.changed {
				require.Same(t, before, got, "nothing stored, ModifyIndex kept")
				require.Empty(t, h.lastEvent().VolumesChanged)
				return
			}
			require.Equal(t, h.index, got.ModifyIndex)
			require.Equal(t, testNow+5, got.Claims[1].UpdatedAt, "Command.Time is the claim's time")
			require.Equal(t, "taken", got.Claims[1].State)
			require.Equal(t, []string{"v"}, h.lastEvent().VolumesChanged)
		})
	}
}

func TestClaimConflictNamesTheHolder(t *testing.T) {
	h := claimedHarness(t)
	res := h.apply(claimVolume("v", testClaim("a2", "n1", ModeWrite, messages.CSIAccessSingleNodeWriter)))
	var ce *ClaimConflictError
	require.ErrorAs(t, res.(error), &ce)
	require.Equal(t, ClaimConflictError{VolumeID: "v", AllocID: "a1", NodeID: "n1",
		Reason: "single-node-writer volume already has a writer"}, *ce)
}

func TestUpdateClaimStateInOrder(t *testing.T) {
	h := claimedHarness(t)
	require.Nil(t, h.apply(claimVolume("v", testClaim("a2", "n1", ModeRead, messages.CSIAccessSingleNodeWriter))))
	publish := &messages.Command{Time: testNow + 1, Cmd: &messages.Command_UpdateClaimState{UpdateClaimState: &messages.UpdateClaimState{
		VolumeID: "v", AllocationID: "a1", State: "taken", PublishContext: map[string]string{"dev": "/dev/xvdf"}, ControllerPublished: true}}}
	require.Nil(t, h.apply(publish))
	vol := h.snap().CSIVolumeByID("default", "v")
	require.True(t, vol.Claims[0].ControllerPublished)
	require.Equal(t, "/dev/xvdf", vol.Claims[0].PublishContext["dev"])

	steps := []struct {
		to   ClaimState
		want error
	}{
		{ClaimNodeDetached, ErrIllegalTransition}, // the node step comes after unpublishing
		{ClaimUnpublishing, nil},
		{ClaimControllerDetached, ErrIllegalTransition}, // never before the node detached
		{ClaimNodeDetached, nil},
		{ClaimTaken, ErrIllegalTransition},
		{ClaimControllerDetached, nil},
		{ClaimFreed, nil},
		{ClaimFreed, nil}, // already gone: idempotent
		{ClaimUnpublishing, ErrClaimNotFound},
	}
	for i, st := range steps {
		now := testNow + int64(10+i)
		res := h.apply(&messages.Command{Time: now, Cmd: updateClaim("v", "a1", st.to).Cmd})
		got := h.snap().CSIVolumeByID("default", "v")
		if st.want != nil {
			require.ErrorIs(t, res.(error), st.want, "step %d: %s", i, st.to)
			continue
		}
		require.Nil(t, res, "step %d: %s", i, st.to)
		if st.to == ClaimFreed {
			require.Equal(t, map[string]string{"a2": "taken"}, claimStates(got), "freed deletes the claim")
			continue
		}
		require.Equal(t, st.to.String(), claimStates(got)["a1"])
		require.Equal(t, now, got.Claims[0].UpdatedAt)
		require.True(t, got.Claims[0].ControllerPublished, "kept along the way")
	}
	vol = h.snap().CSIVolumeByID("default", "v")
	require.Equal(t, messages.CSIAccessSingleNodeWriter, vol.AccessMode, "a2 still uses the volume")

	for _, st := range []ClaimState{ClaimUnpublishing, ClaimNodeDetached, ClaimControllerDetached, ClaimFreed} {
		require.Nil(t, h.apply(updateClaim("v", "a2", st)))
	}
	vol = h.snap().CSIVolumeByID("default", "v")
	require.Empty(t, vol.Claims)
	require.Empty(t, vol.AccessMode, "modes in use cleared with the last claim")
	require.ErrorIs(t, h.apply(updateClaim("w", "a2", ClaimFreed)).(error), ErrVolumeNotFound)
}
