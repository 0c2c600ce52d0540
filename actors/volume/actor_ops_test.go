package volume

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// TestActorCreateAndDelete: create runs CreateVolume through the
// controller and registers what it returned; delete runs DeleteVolume and
// deregisters.
func TestActorCreateAndDelete(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.start()
	spec := testVolume("new", true)
	spec.RequestedCapacityMin = 1 << 30
	r := h.op(&messages.VolumeOpRequest{Op: opRequestCreate, VolumeID: "new", Volume: spec})
	require.Nil(t, r.GetError())
	require.Equal(t, "new", r.GetVolume().GetExternalID())
	require.Equal(t, int64(1<<30), r.GetVolume().GetCapacity())
	require.Equal(t, map[string]string{"made": "fake"}, r.GetVolume().GetContext())
	require.NotZero(t, r.GetIndex())
	require.True(t, h.csi.HasVolume("new"))
	require.Equal(t, "new", h.stored("new").GetExternalID())

	again := h.op(&messages.VolumeOpRequest{Op: opRequestCreate, VolumeID: "new", Volume: spec})
	require.Equal(t, messages.CodeConflict, again.GetError().ErrorCode())
	require.Contains(t, again.GetError().GetMessage(), `"new" already exists`)
	require.Equal(t, 1, h.csi.Calls(csi.MethodCreateVolume))

	bad := h.op(&messages.VolumeOpRequest{Op: opRequestCreate, VolumeID: "x", Volume: &messages.CSIVolume{ID: "x"}})
	require.Equal(t, messages.CodeInvalid, bad.GetError().ErrorCode())

	noCtrl := testVolume("orphan", true)
	noCtrl.PluginID = "no-such-plugin"
	refused := h.op(&messages.VolumeOpRequest{Op: opRequestCreate, VolumeID: "orphan", Volume: noCtrl})
	require.Equal(t, messages.CodeUnavailable, refused.GetError().ErrorCode(), "a create does not wait for a controller")
	require.Contains(t, refused.GetError().GetMessage(), `plugin "no-such-plugin" has no healthy controller`)
	require.Nil(t, h.stored("orphan"))

	h.csi.FailNext(csi.MethodDeleteVolume, status.Error(codes.FailedPrecondition, "snapshots left"), 1)
	del := h.op(&messages.VolumeOpRequest{Op: opRequestDelete, VolumeID: "new", Secrets: map[string]string{"k": "v"}})
	require.Equal(t, messages.CodeConflict, del.GetError().ErrorCode(), "FailedPrecondition is the user's to fix: 409")
	require.Contains(t, del.GetError().GetMessage(), "snapshots left")
	require.NotNil(t, h.stored("new"), "a failed delete keeps the volume")
	require.Equal(t, map[string]string{"k": "v"}, h.rpc.lastSecrets())

	del = h.op(&messages.VolumeOpRequest{Op: opRequestDelete, VolumeID: "new"})
	require.Nil(t, del.GetError())
	require.Nil(t, h.stored("new"))
	require.False(t, h.csi.HasVolume("new"))
	require.Equal(t, 2, h.csi.Calls(csi.MethodDeleteVolume))

	gone := h.op(&messages.VolumeOpRequest{Op: opRequestDelete, VolumeID: "new"})
	require.Equal(t, messages.CodeNotFound, gone.GetError().ErrorCode())
	unknown := h.op(&messages.VolumeOpRequest{Op: "resize", VolumeID: "new"})
	require.Equal(t, messages.CodeInvalid, unknown.GetError().ErrorCode())
}

// TestActorDeregister: a volume in use is refused (naming the claim);
// once the claim is freed it is deregistered, its actor stops, and the
// same ID registered again is claimed by a fresh actor.
func TestActorDeregister(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.alloc("a2", "n1")
	h.start()
	h.claimed("vol1", "a1")

	for _, force := range []bool{false, true} {
		r := h.op(&messages.VolumeOpRequest{Op: opRequestDeregister, VolumeID: "vol1", Force: force})
		require.Equal(t, messages.CodeConflict, r.GetError().ErrorCode(), "force %t", force)
		require.Contains(t, r.GetError().GetMessage(), "a1")
	}
	del := h.op(&messages.VolumeOpRequest{Op: opRequestDelete, VolumeID: "vol1"})
	require.Equal(t, messages.CodeConflict, del.GetError().ErrorCode())
	require.Zero(t, h.csi.Calls(csi.MethodDeleteVolume))

	require.Nil(t, h.detached("vol1", "a1", "n1").GetError())
	h.waitClaim("vol1", "a1", "")
	r := h.op(&messages.VolumeOpRequest{Op: opRequestDeregister, VolumeID: "vol1"})
	require.Nil(t, r.GetError())
	require.NotZero(t, r.GetIndex())
	require.Nil(t, h.stored("vol1"))
	require.Eventually(t, func() bool { return h.phase("volumes/v/vol1") == "" }, 5*time.Second, time.Millisecond,
		"the volume actor stops")

	h.volume("vol1")
	h.claimed("vol1", "a2")
	require.Equal(t, state.ClaimTaken.String(), h.claimState("vol1", "a2"))
}

// TestActorDetachRedrivesFailedUnpublish: a controller unpublish that
// failed for good leaves the claim in node-detached; the operator's detach
// tries it again.
func TestActorDetachRedrivesFailedUnpublish(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.claimed("vol1", "a1")
	h.csi.FailNext(csi.MethodControllerUnpublish, status.Error(codes.FailedPrecondition, "volume busy"), 1)
	require.Nil(t, h.detached("vol1", "a1", "n1").GetError())
	require.Eventually(t, func() bool {
		return h.csi.Calls(csi.MethodControllerUnpublish) == 1 && h.phase("volumes/v/vol1") == "idle"
	}, 5*time.Second, time.Millisecond)
	require.Equal(t, state.ClaimNodeDetached.String(), h.claimState("vol1", "a1"))
	require.Zero(t, h.clock.Pending(), "no retry for a failure that will not heal")

	bad := h.op(&messages.VolumeOpRequest{Op: opRequestDetach, VolumeID: "vol1"})
	require.Equal(t, messages.CodeInvalid, bad.GetError().ErrorCode())
	r := h.op(&messages.VolumeOpRequest{Op: opRequestDetach, VolumeID: "vol1", NodeID: "n1"})
	require.Nil(t, r.GetError())
	h.waitClaim("vol1", "a1", "")
	require.Equal(t, 2, h.csi.Calls(csi.MethodControllerUnpublish))
}

// TestActorLostAllocOnDisconnectedNode: an allocation marked lost while
// its node is disconnected (past stop_on_client_after) abandons the node
// plugin; a lost allocation on a live node waits for the node's report.
func TestActorLostAllocOnDisconnectedNode(t *testing.T) {
	h := newHarness(t)
	h.node("n1", "ready")
	h.node("n2", "ready")
	h.plugin("n1", false, true)
	h.plugin("n2", true, true)
	h.volume("vol1")
	h.volume("vol2")
	h.alloc("a1", "n1")
	h.alloc("a2", "n2")
	h.start()
	h.claimed("vol1", "a1")
	r := h.claim("vol2", "a2", "n2", messages.CSIAccessSingleNodeWriter)
	require.Nil(t, r.GetError())

	h.nodeStatus("n1", "disconnected")
	h.allocStatus("a1", "lost")
	h.allocStatus("a2", "lost")
	h.waitClaim("vol1", "a1", "")
	h.waitClaim("vol2", "a2", state.ClaimUnpublishing.String())
	h.before("a1:node-detached!", "rpc controller-unpublish vol1/a1", "a1:freed")
	require.Equal(t, []string{"vol1/a1"}, h.rpcs(opControllerUnpublish))
}
