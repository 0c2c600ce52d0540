package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestGCKeepsAllocsWithClaims: a finished allocation whose volume claim
// is still on its way to freed (the node has not unpublished yet) is not
// collected, nor its job or evaluation; once the claim went through the
// release path to freed, the next collection takes them, and no volume
// names the collected allocation.
func TestGCKeepsAllocsWithClaims(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1<<20, 1<<20)))
	require.Nil(t, h.apply(registerVolume(testVolume("vol", true))))
	runBatchJob(h, "b", testNow)
	require.Nil(t, h.apply(claimVolume("vol", testClaim("a-b", "n1", ModeWrite, "single-node-writer"))))
	require.Nil(t, h.apply(updateClaim("vol", "a-b", ClaimUnpublishing)))
	require.Len(t, h.snap().csiVolumesClaimedBy("a-b"), 1)

	now := testNow + 5*hour
	collect := func() *GCResult {
		return h.apply(gcCmd(now, &messages.GarbageCollect{
			Jobs: []*messages.GCJob{{Namespace: "default", ID: "b"}}, EvalIDs: []string{"e-b"},
			EvalCutoff: now, JobCutoff: now, NodeCutoff: now,
		})).(*GCResult)
	}
	s := h.snap()
	require.False(t, s.AllocCollectable(s.AllocByID("a-b"), now), "its claim is not freed")
	require.False(t, s.JobCollectable(s.JobByID("default", "b"), GCCutoffs{Eval: now, Job: now, Node: now}))
	r := collect()
	require.Equal(t, &GCResult{Index: h.index}, r, "nothing collected while the claim is unpublishing")
	require.NotNil(t, h.snap().AllocByID("a-b"))
	require.Equal(t, map[string]string{"a-b": ClaimUnpublishing.String()}, claimStates(h.snap().CSIVolumeAnyNamespace("vol")))

	for _, st := range []ClaimState{ClaimNodeDetached, ClaimControllerDetached} {
		require.Nil(t, h.apply(updateClaim("vol", "a-b", st)))
		require.Equal(t, 0, collect().Allocs, "claim %s still holds the allocation", st)
	}
	require.Nil(t, h.apply(updateClaim("vol", "a-b", ClaimFreed)))
	require.Empty(t, h.snap().csiVolumesClaimedBy("a-b"))

	r = collect()
	require.Equal(t, []int{1, 1}, []int{r.Jobs, r.Allocs})
	s = h.snap()
	require.Nil(t, s.AllocByID("a-b"))
	require.Nil(t, s.JobByID("default", "b"))
	for _, v := range s.CSIVolumes() {
		for _, c := range v.GetClaims() {
			require.NotNil(t, s.AllocByID(c.GetAllocationID()), "volume %s names collected alloc %s", v.GetID(), c.GetAllocationID())
		}
	}
}
