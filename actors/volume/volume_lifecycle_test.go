package volume

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

func TestDeregister(t *testing.T) {
	s := publishedState(t, "a1")
	_, err := s.Step(deregisterRequested{})
	require.ErrorIs(t, err, state.ErrVolumeInUse)
	require.ErrorContains(t, err, `"a1"`)
	_, err = s.Step(deregisterRequested{Force: true})
	require.ErrorIs(t, err, state.ErrVolumeInUse, "force does not drop a taken claim")

	step(t, s, releaseRequested{AllocID: "a1"})
	e := step(t, s, deregisterRequested{Force: true})
	require.Equal(t, []string{"deregister"}, proposedStates(e))
	require.True(t, e.Propose[0].Deregister.GetForce())

	_, err = s.Step(claimRequested{Claim: testClaim("a2", "n1", state.ModeRead, messages.CSIAccessSingleNodeWriter)})
	require.ErrorIs(t, err, errDeregistered)

	free := newVolumeState(testVolume("w", true))
	e = step(t, free, deregisterRequested{})
	require.Equal(t, "w", e.Propose[0].Deregister.GetVolumeID())
}

func TestDelete(t *testing.T) {
	_, err := publishedState(t, "a1").Step(deleteRequested{})
	require.ErrorIs(t, err, state.ErrVolumeInUse)

	s := newVolumeState(testVolume("v", true))
	e := step(t, s, deleteRequested{})
	require.Equal(t, []string{"delete-volume "}, opNames(e.Controller))
	_, err = s.Step(claimRequested{Claim: testClaim("a1", "n1", state.ModeRead, messages.CSIAccessMultiNodeReader)})
	require.ErrorIs(t, err, errDeregistered)
	e = step(t, s, volumeDeleted{})
	require.Equal(t, []string{"deregister"}, proposedStates(e))
	require.Equal(t, []reply{{AllocID: ""}}, e.Replies)

	s = newVolumeState(testVolume("v", true))
	step(t, s, deleteRequested{})
	e = step(t, s, controllerFailed{Message: "busy", Retryable: true})
	require.ErrorIs(t, e.Replies[0].Err, errControllerFailed)
	step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeRead, messages.CSIAccessMultiNodeReader)})
}

// TestResumeRedrivesClaimsMidWay is a new leader's volume actor: every
// claim that is mid-way moves on, one controller op at a time, and
// resuming again adds nothing.
func TestResumeRedrivesClaimsMidWay(t *testing.T) {
	vol := testVolume("v", true)
	vol.AccessMode, vol.AttachmentMode = messages.CSIAccessMultiNodeMultiWriter, messages.CSIAttachFileSystem
	add := func(alloc, node, claimState string, published bool) {
		c := testClaim(alloc, node, state.ModeWrite, messages.CSIAccessMultiNodeMultiWriter)
		c.State, c.ControllerPublished = claimState, published
		vol.Claims = append(vol.Claims, c)
	}
	add("taken", "n1", "taken", true)
	add("unpub", "n2", "unpublishing", true)
	add("never", "n3", "unpublishing", false)
	add("nodedet", "n4", "node-detached", true)
	add("ctrldet", "n5", "controller-detached", true)

	s := newVolumeState(vol)
	e := step(t, s, resume{})
	require.Equal(t, []string{"never:node-detached", "ctrldet:freed"}, proposedStates(e))
	require.Equal(t, []string{"controller-unpublish never"}, opNames(e.Controller))
	require.Equal(t, []string{"controller-unpublish nodedet"}, opNames(s.Queued()))
	require.Equal(t, map[string]string{"taken": "taken", "unpub": "unpublishing", "never": "node-detached",
		"nodedet": "node-detached"}, states(s))

	e = step(t, s, resume{})
	require.Empty(t, e.Propose)
	require.Empty(t, e.Controller)
	require.Len(t, s.Queued(), 1, "nothing queued twice")

	e = step(t, s, controllerDetached{AllocID: "never"})
	require.Equal(t, []string{"controller-unpublish nodedet"}, opNames(e.Controller))
}

// TestControllerUnpublishOnlyAfterNodeDetached drives random input
// sequences and checks the hard gate after every step: a ControllerUnpublish
// for a claim is only ever emitted once the node reported it detached, the
// node was declared abandoned, or the claim never reached the node.
func TestControllerUnpublishOnlyAfterNodeDetached(t *testing.T) {
	allocs := []string{"a1", "a2", "a3"}
	nodes := map[string]string{"a1": "n1", "a2": "n2", "a3": "n1"}
	rng := rand.New(rand.NewSource(1))
	unpublishes := 0
	for run := 0; run < 300; run++ {
		s := newVolumeState(testVolume("v", true))
		stored := testVolume("v", true) // what the FSM stores from the proposals
		nodeDone := map[string]bool{}   // node reported or abandoned
		published := map[string]bool{}  // claim handed to its node
		for i := 0; i < 40; i++ {
			a := allocs[rng.Intn(len(allocs))]
			in := randomInput(rng, s, a, nodes[a])
			e, err := s.Step(in)
			if err != nil {
				continue
			}
			applyProposals(t, stored, e.Propose)
			require.True(t, proto.Equal(stored, s.Volume()), "run %d step %d: the FSM stores what the state predicts", run, i)
			switch in.(type) {
			case nodeDetached, nodeAbandoned:
				nodeDone[a] = true
			}
			for _, r := range e.Replies {
				if r.Err == nil && r.Claim != nil {
					published[r.AllocID] = true
				}
			}
			for _, op := range e.Controller {
				if op.GetKind() == opControllerUnpublish {
					unpublishes++
					id := op.GetAllocationID()
					require.True(t, nodeDone[id] || !published[id], "run %d step %d: unpublish %s before node detach", run, i, id)
					require.Equal(t, "node-detached", states(s)[id])
				}
			}
			for _, c := range s.Volume().GetClaims() {
				if c.GetState() == "" {
					continue
				}
				if st, _ := state.ParseClaimState(c.GetState()); st >= state.ClaimNodeDetached {
					require.True(t, nodeDone[c.GetAllocationID()] || !published[c.GetAllocationID()])
				}
			}
			for _, c := range s.Volume().GetClaims() { // a freed claim may come back as a new one
				if c.GetState() == state.ClaimTaken.String() && !c.GetControllerPublished() {
					delete(nodeDone, c.GetAllocationID())
					delete(published, c.GetAllocationID())
				}
			}
		}
	}
	require.Greater(t, unpublishes, 100, "the walk reaches the controller step often")
}

// randomInput picks an input for alloc a, with results only for the op in
// flight (as the actor would deliver them).
func randomInput(rng *rand.Rand, s *volumeState, a, node string) input {
	if op := s.InFlight(); op != nil && rng.Intn(3) == 0 {
		switch {
		case rng.Intn(4) == 0:
			return controllerFailed{AllocID: op.GetAllocationID(), Retryable: rng.Intn(2) == 0}
		case op.GetKind() == opControllerPublish:
			return controllerPublished{AllocID: op.GetAllocationID()}
		default:
			return controllerDetached{AllocID: op.GetAllocationID()}
		}
	}
	switch rng.Intn(6) {
	case 0:
		return claimRequested{Claim: testClaim(a, node, state.ModeWrite, messages.CSIAccessMultiNodeMultiWriter)}
	case 1:
		return releaseRequested{AllocID: a}
	case 2:
		return nodeDetached{AllocID: a}
	case 3:
		if rng.Intn(3) == 0 {
			return nodeAbandoned{AllocID: a}
		}
		return RetryDue{AllocID: a}
	case 4:
		return resume{}
	}
	return claimRequested{Claim: testClaim(a, node, state.ModeWrite, messages.CSIAccessMultiNodeMultiWriter)}
}

// applyProposals applies proposals as the FSM does; it refuses none of them.
func applyProposals(t *testing.T, vol *messages.CSIVolume, props []proposal) {
	t.Helper()
	for _, p := range props {
		switch {
		case p.Claim != nil:
			require.NoError(t, state.ApplyClaimVolume(vol, p.Claim, 0))
		case p.UpdateClaim != nil:
			require.NoError(t, state.ApplyUpdateClaimState(vol, p.UpdateClaim, 0))
		}
	}
}
