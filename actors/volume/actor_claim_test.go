package volume

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// TestActorClaimPublishesAndReplies: a claim on a volume that needs a
// controller is answered after ClaimVolume committed and
// ControllerPublish ran, with the publish context; the actors sit at
// server/volumes/v/<id> and .../c/<plugin>.
func TestActorClaimPublishesAndReplies(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()

	r := h.claimed("vol1", "a1")
	require.Equal(t, map[string]string{"device": "/dev/fake"}, r.GetClaim().GetPublishContext())
	require.True(t, r.GetClaim().GetControllerPublished())
	require.Equal(t, "vol1", r.GetVolume().GetID())
	require.Equal(t, state.ClaimTaken.String(), h.claimState("vol1", "a1"))
	require.True(t, h.csi.ControllerPublished("ext-vol1", "ext-n1"))
	h.before("a1:claim", "rpc controller-publish vol1/a1", "a1:taken")

	// Claiming again (a client retry) answers the same claim, no new call.
	again := h.claimed("vol1", "a1")
	require.Equal(t, r.GetClaim().GetPublishContext(), again.GetClaim().GetPublishContext())
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerPublish))

	require.Eventually(t, func() bool { return h.phase("volumes/v/vol1") == "idle" }, 5*time.Second, time.Millisecond)
	require.Equal(t, "idle", h.phase("volumes/c/hostpath"))
}

// TestActorClaimUnknownVolume answers not_found.
func TestActorClaimUnknownVolume(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.start()
	r := h.claim("nope", "a1", "n1", messages.CSIAccessSingleNodeWriter)
	require.Equal(t, messages.CodeNotFound, r.GetError().ErrorCode())
	require.Contains(t, r.GetError().GetMessage(), `"nope"`)
}

// TestActorSecondWriterRefused: a second writer on a single-writer volume
// is refused with a conflict that names the volume and the holder.
func TestActorSecondWriterRefused(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.alloc("a2", "n1")
	h.start()
	h.claimed("vol1", "a1")

	r := h.claim("vol1", "a2", "n1", messages.CSIAccessSingleNodeWriter)
	require.Equal(t, messages.CodeConflict, r.GetError().ErrorCode())
	require.Contains(t, r.GetError().GetMessage(), `volume "vol1"`)
	require.Contains(t, r.GetError().GetMessage(), `alloc "a1"`)
	require.Nil(t, r.GetClaim())
	require.Equal(t, "", h.claimState("vol1", "a2"))
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerPublish))
}

// TestActorNodeDetachBeforeControllerUnpublish: a stopped allocation's
// claim starts unpublishing and waits for the node; only the node's
// report leads to ControllerUnpublish, and then the claim is freed.
func TestActorNodeDetachBeforeControllerUnpublish(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.claimed("vol1", "a1")

	h.allocStatus("a1", "complete")
	h.waitClaim("vol1", "a1", state.ClaimUnpublishing.String())
	// the volume actor is done with the release: nothing was sent to the controller
	require.Eventually(t, func() bool { return h.phase("volumes/v/vol1") == "idle" }, 5*time.Second, time.Millisecond)
	require.Zero(t, h.csi.Calls(csi.MethodControllerUnpublish))

	r := h.detached("vol1", "a1", "n1")
	require.Nil(t, r.GetError())
	require.NotZero(t, r.GetIndex())
	h.waitClaim("vol1", "a1", "")
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerUnpublish))
	require.False(t, h.csi.ControllerPublished("ext-vol1", "ext-n1"))
	h.before("a1:unpublishing", "a1:node-detached", "rpc controller-unpublish vol1/a1", "a1:controller-detached", "a1:freed")
	require.Empty(t, h.stored("vol1").GetAccessMode(), "modes in use are cleared with the last claim")
}

// TestActorNodeDetachedFromWrongNode is refused and changes nothing.
func TestActorNodeDetachedFromWrongNode(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.claimed("vol1", "a1")
	r := h.detached("vol1", "a1", "n9")
	require.Equal(t, messages.CodeInvalid, r.GetError().ErrorCode())
	require.Equal(t, state.ClaimTaken.String(), h.claimState("vol1", "a1"))
}

// TestActorAbandonedNodeGoesToControllerStep: when the claim's node goes
// down, nobody will report the node unpublish: the claim goes straight to
// ControllerUnpublish (on the controller on another node) and is freed.
func TestActorAbandonedNodeGoesToControllerStep(t *testing.T) {
	h := newHarness(t)
	h.node("n1", "ready")
	h.node("n2", "ready")
	h.plugin("n1", false, true)
	h.plugin("n2", true, true)
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.claimed("vol1", "a1")

	h.nodeStatus("n1", "down")
	h.waitClaim("vol1", "a1", "")
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerUnpublish))
	require.Equal(t, []string{"n2", "n2"}, h.rpc.calledNodes())
	h.before("a1:unpublishing", "a1:node-detached!", "rpc controller-unpublish vol1/a1", "a1:freed")
}

// TestActorCommitFailureAnswersAndRecovers: a claim whose commit fails
// (the leader stepped down) is answered not_leader; the state is rebuilt
// from the store, a Resume follows after the backoff, and the next claim
// goes through.
func TestActorCommitFailureAnswersAndRecovers(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.prop.failNext(1)
	r := h.claim("vol1", "a1", "n1", messages.CSIAccessSingleNodeWriter)
	require.Equal(t, messages.CodeNotLeader, r.GetError().ErrorCode(), "%v", r.GetError())
	require.Equal(t, "", h.claimState("vol1", "a1"))
	require.Zero(t, h.csi.Calls(csi.MethodControllerPublish))

	require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond,
		"a Resume is due after the backoff")
	h.clock.Advance(testRetry.Initial)
	require.Eventually(t, func() bool { return h.clock.Pending() == 0 }, 5*time.Second, time.Millisecond)

	r = h.claimed("vol1", "a1")
	require.True(t, r.GetClaim().GetControllerPublished())
	require.Equal(t, state.ClaimTaken.String(), h.claimState("vol1", "a1"))
}

// TestActorManyClaimsOneVolume: concurrent claims on a multi-writer
// volume are all answered, each published once.
func TestActorManyClaimsOneVolume(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	const n = 10
	for i := range n {
		h.alloc(fmt.Sprintf("a%d", i), "n1")
	}
	h.start()
	errs := make(chan error, n)
	for i := range n {
		go func() {
			req := &messages.VolumeClaimRequest{VolumeID: "vol1",
				Claim: testClaim(fmt.Sprintf("a%d", i), "n1", state.ModeWrite, messages.CSIAccessMultiNodeMultiWriter)}
			res, err := h.sys.Root.RequestFuture(h.mgr.Load(), req, 10*time.Second).Result()
			if r, ok := res.(*messages.VolumeClaimResponse); err == nil && (!ok || r.GetError() != nil) {
				err = fmt.Errorf("claim a%d: %v", i, res)
			}
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	require.Len(t, h.stored("vol1").GetClaims(), n)
	for _, c := range h.stored("vol1").GetClaims() {
		require.True(t, c.GetControllerPublished(), c.GetAllocationID())
	}
	require.Equal(t, 1, h.csi.MaxInFlight(csi.MethodControllerPublish))
}
