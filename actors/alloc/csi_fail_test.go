package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestCSISetupRefusedByNodePlugin: a node plugin that refuses NodeStage
// or NodePublish for good fails the allocation with a description and a
// task event naming the volume and the plugin's error; what was staged is
// unstaged, and the claim is reported detached so the server frees it.
func TestCSISetupRefusedByNodePlugin(t *testing.T) {
	for _, tc := range []struct {
		method, rpc string
		order       []string
	}{
		{csi.MethodNodeStage, "NodeStageVolume", []string{"Claim vol0", "NodeStage ext-vol0", "NodeUnstage ext-vol0"}},
		{csi.MethodNodePublish, "NodePublishVolume",
			[]string{"Claim vol0", "NodeStage ext-vol0", "NodePublish ext-vol0", "NodeUnpublish ext-vol0", "NodeUnstage ext-vol0"}},
	} {
		t.Run(tc.rpc, func(t *testing.T) {
			h, e, pc := csiHarness(t)
			e.known("vol0")
			e.plugin.FailNext(tc.method, grpcstatus.Error(codes.FailedPrecondition, "device not ready"), 1)
			h.spawn(csiAlloc(csiAllocID, "vol0"))
			failed := h.waitFor("failed", status(statusFailed))
			want := `CSI volume "vol0": ` + tc.rpc + ": "
			require.Contains(t, failed.GetClientDescription(), want)
			require.Contains(t, failed.GetClientDescription(), "device not ready")
			st := failed.GetTaskStates()["t"]
			require.Equal(t, taskDead, st.GetState())
			require.True(t, st.GetFailed())
			last := st.GetEvents()[len(st.GetEvents())-1]
			require.Equal(t, eventSetupFailure, last.GetType())
			require.Contains(t, last.GetDisplayMessage(), want)
			require.Zero(t, h.fake.Calls(driver.MethodStartTask))

			waitPostrun(t, pc, 1)
			require.Equal(t, []string{"vol0"}, e.claimer.detachedVolumes(), "the claim is let go")
			require.Equal(t, 1, e.plugin.Calls(tc.method), "a refusal is not retried")
			require.Equal(t, append(tc.order, "NodeDetached vol0"), e.log.all(), "detached only after the node side is undone")
			done := h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
			require.Contains(t, eventTypes(done.GetVolumeStates()["vol0"]), eventVolumeSetupFailed)
		})
	}
}

// TestCSISetupErrorNamesClaimedVolume: a per_alloc volume's error names
// the volume the server knows ("vol0[2]") and the group's name for it.
func TestCSISetupErrorNamesClaimedVolume(t *testing.T) {
	h, e, _ := csiHarness(t)
	e.known("vol0[2]")
	e.plugin.FailNext(csi.MethodNodePublish, grpcstatus.Error(codes.InvalidArgument, "bad capability"), 1)
	a := csiAlloc(csiAllocID, "vol0")
	a.Index, a.Name = 2, "web.g[2]"
	a.Job.TaskGroups[0].Volumes["vol0"].PerAlloc = true
	h.spawn(a)
	failed := h.waitFor("failed", status(statusFailed))
	require.Contains(t, failed.GetClientDescription(), `CSI volume "vol0[2]" (group volume "vol0"): NodePublishVolume: `)
	require.Contains(t, failed.GetClientDescription(), "bad capability")
}

// TestVolumeErrorIsVolumeSetup: volumeError matches errVolumeSetup and
// unwraps to the step's error.
func TestVolumeErrorIsVolumeSetup(t *testing.T) {
	cause := grpcstatus.Error(codes.Internal, "boom")
	err := error(&volumeError{VolumeID: "v", Name: "v", Step: "NodeStageVolume", Err: cause})
	require.ErrorIs(t, err, errVolumeSetup)
	require.ErrorIs(t, err, cause)
	require.Equal(t, `CSI volume "v": NodeStageVolume: rpc error: code = Internal desc = boom`, err.Error())
	require.Equal(t, codes.Internal, csi.Code(err))
}
