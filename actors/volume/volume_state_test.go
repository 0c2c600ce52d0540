package volume

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

func TestClaimWithoutControllerIsUsableAtOnce(t *testing.T) {
	s := newVolumeState(testVolume("v", false))
	e := step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.Equal(t, []string{"a1:claim"}, proposedStates(e))
	require.Empty(t, e.Controller)
	require.Len(t, e.Replies, 1)
	require.NoError(t, e.Replies[0].Err)
	require.Equal(t, "taken", e.Replies[0].Claim.GetState())
	require.Equal(t, messages.CSIAccessSingleNodeWriter, s.Volume().GetAccessMode())
}

func TestClaimWaitsForControllerPublish(t *testing.T) {
	s := newVolumeState(testVolume("v", true))
	e := step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.Equal(t, []string{"a1:claim"}, proposedStates(e))
	require.Equal(t, []string{"controller-publish a1"}, opNames(e.Controller))
	require.Equal(t, "ext-n1", e.Controller[0].GetExternalNodeID())
	require.Equal(t, "ext-v", e.Controller[0].GetExternalVolumeID())
	require.Empty(t, e.Replies, "not usable before ControllerPublish")

	e = step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.Empty(t, e.Propose, "claiming again is idempotent")
	require.Empty(t, e.Controller, "the publish in flight serves both requests")

	e = step(t, s, controllerPublished{AllocID: "a1", PublishContext: map[string]string{"dev": "/dev/xvdf"}})
	require.Equal(t, []string{"a1:taken"}, proposedStates(e))
	require.True(t, e.Propose[0].UpdateClaim.GetControllerPublished())
	require.Len(t, e.Replies, 1)
	require.Equal(t, "/dev/xvdf", e.Replies[0].Claim.GetPublishContext()["dev"])

	e = step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.Empty(t, e.Propose)
	require.Empty(t, e.Controller)
	require.Len(t, e.Replies, 1, "a usable claim is answered at once")
	require.Equal(t, "/dev/xvdf", e.Replies[0].Claim.GetPublishContext()["dev"])
}

// Stopping: ControllerUnpublish comes only after the node detached.
func TestNodeDetachBeforeControllerDetach(t *testing.T) {
	s := publishedState(t, "a1")
	e := step(t, s, releaseRequested{AllocID: "a1"})
	require.Equal(t, []string{"a1:unpublishing"}, proposedStates(e))
	require.Empty(t, e.Controller, "no controller call while the node may still have it mounted")

	_, err := s.Step(controllerDetached{AllocID: "a1"})
	require.ErrorIs(t, err, errUnexpectedResult)
	e = step(t, s, resume{})
	require.Empty(t, e.Controller, "resume does not skip the node either")
	require.Equal(t, "unpublishing", states(s)["a1"])

	e = step(t, s, nodeDetached{AllocID: "a1"})
	require.Equal(t, []string{"a1:node-detached"}, proposedStates(e))
	require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller))

	e = step(t, s, controllerDetached{AllocID: "a1"})
	require.Equal(t, []string{"a1:controller-detached", "a1:freed"}, proposedStates(e))
	require.Empty(t, s.Volume().GetClaims())
	require.Empty(t, s.Volume().GetAccessMode())
	require.Nil(t, s.InFlight())
}

func TestAbandonedNodeGoesToControllerStep(t *testing.T) {
	for _, released := range []bool{false, true} {
		t.Run(map[bool]string{false: "from taken", true: "from unpublishing"}[released], func(t *testing.T) {
			s := publishedState(t, "a1")
			if released {
				step(t, s, releaseRequested{AllocID: "a1"})
			}
			e := step(t, s, nodeAbandoned{AllocID: "a1"})
			want := []string{"a1:unpublishing", "a1:node-detached"}
			require.Equal(t, want[len(want)-len(e.Propose):], proposedStates(e))
			last := e.Propose[len(e.Propose)-1].UpdateClaim
			require.True(t, last.GetNodeAbandoned())
			require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller))
			require.True(t, s.Volume().GetClaims()[0].GetNodeAbandoned())
			require.Equal(t, state.ReasonNodeAbandoned, e.Transitions[len(e.Transitions)-1].Why)
		})
	}
}

func TestOneControllerOpInFlightPerVolume(t *testing.T) {
	s := newVolumeState(testVolume("v", true))
	e := step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeRead, messages.CSIAccessMultiNodeReader)})
	require.Equal(t, []string{"controller-publish a1"}, opNames(e.Controller))
	e = step(t, s, claimRequested{Claim: testClaim("a2", "n2", state.ModeRead, messages.CSIAccessMultiNodeReader)})
	require.Equal(t, []string{"a2:claim"}, proposedStates(e))
	require.Empty(t, e.Controller, "queued behind a1's publish")
	require.Equal(t, []string{"controller-publish a2"}, opNames(s.Queued()))

	_, err := s.Step(controllerPublished{AllocID: "a2"})
	require.ErrorIs(t, err, errUnexpectedResult, "a2's publish is not in flight")

	e = step(t, s, controllerPublished{AllocID: "a1"})
	require.Equal(t, []string{"controller-publish a2"}, opNames(e.Controller))
	require.Equal(t, "a2", s.InFlight().GetAllocationID())
	require.Empty(t, s.Queued())
}

func TestControllerUnpublishRetries(t *testing.T) {
	s := detachingState(t, "a1")
	e := step(t, s, controllerFailed{AllocID: "a1", Retryable: true, Message: "aborted"})
	require.Equal(t, []retry{{AllocID: "a1", Attempt: 1}}, e.Retry)
	require.Nil(t, s.InFlight())
	e = step(t, s, resume{})
	require.Empty(t, e.Controller, "waiting for RetryDue, not re-run by resume")

	e = step(t, s, RetryDue{AllocID: "a1"})
	require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller))
	e = step(t, s, controllerFailed{AllocID: "a1", Retryable: true})
	require.Equal(t, []retry{{AllocID: "a1", Attempt: 2}}, e.Retry)
	step(t, s, RetryDue{AllocID: "a1"})
	e = step(t, s, controllerDetached{AllocID: "a1"})
	require.Equal(t, []string{"a1:controller-detached", "a1:freed"}, proposedStates(e))

	e = step(t, s, RetryDue{AllocID: "a1"})
	require.Empty(t, e.Controller, "a stale retry does nothing")
}

func TestControllerUnpublishPermanentFailure(t *testing.T) {
	s := detachingState(t, "a1")
	e := step(t, s, controllerFailed{AllocID: "a1", Message: "permission denied"})
	require.Empty(t, e.Retry)
	require.Len(t, e.Failures, 1)
	require.ErrorIs(t, e.Failures[0], errControllerFailed)
	require.ErrorContains(t, e.Failures[0], "permission denied")
	require.Equal(t, "node-detached", states(s)["a1"])

	e = step(t, s, resume{})
	require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller), "an operator's resume re-drives it")
}

func TestControllerPublishFailure(t *testing.T) {
	t.Run("retryable", func(t *testing.T) {
		s := newVolumeState(testVolume("v", true))
		step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
		e := step(t, s, controllerFailed{AllocID: "a1", Retryable: true, Message: "busy"})
		require.Len(t, e.Replies, 1)
		var ce *controllerError
		require.ErrorAs(t, e.Replies[0].Err, &ce)
		require.True(t, ce.Retryable)
		require.Equal(t, "taken", states(s)["a1"])
		e = step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
		require.Equal(t, []string{"controller-publish a1"}, opNames(e.Controller), "the client's retry publishes again")
	})
	t.Run("permanent", func(t *testing.T) {
		s := newVolumeState(testVolume("v", true))
		step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
		e := step(t, s, controllerFailed{AllocID: "a1", Message: "invalid"})
		require.Len(t, e.Replies, 1)
		require.ErrorIs(t, e.Replies[0].Err, errControllerFailed)
		require.Equal(t, []string{"a1:unpublishing", "a1:node-detached"}, proposedStates(e))
		require.Equal(t, state.ReasonNeverPublished, e.Transitions[1].Why)
		require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller), "clean up a partial attach")
	})
}

func TestReleaseWhilePublishInFlight(t *testing.T) {
	s := newVolumeState(testVolume("v", true))
	step(t, s, claimRequested{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	e := step(t, s, releaseRequested{AllocID: "a1"})
	require.Len(t, e.Replies, 1)
	require.ErrorIs(t, e.Replies[0].Err, state.ErrClaimReleasing)
	require.Equal(t, []string{"a1:unpublishing", "a1:node-detached"}, proposedStates(e))
	require.Empty(t, e.Controller, "the unpublish waits behind the publish in flight")

	e = step(t, s, controllerPublished{AllocID: "a1"})
	require.Empty(t, e.Propose, "a released claim does not become usable")
	require.Empty(t, e.Replies)
	require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller))
}

func TestClaimsOnSameNodeShareTheAttachment(t *testing.T) {
	s := publishedState(t, "a1")
	_, err := s.Step(claimRequested{Claim: testClaim("a2", "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.ErrorIs(t, err, state.ErrClaimConflict, "a1 already writes")
	_, err = s.Step(claimRequested{Claim: testClaim("a3", "n2", state.ModeRead, messages.CSIAccessSingleNodeWriter)})
	require.ErrorIs(t, err, state.ErrClaimConflict, "single node")

	e := step(t, s, claimRequested{Claim: testClaim("a2", "n1", state.ModeRead, messages.CSIAccessSingleNodeWriter)})
	require.Empty(t, e.Controller, "a2 reuses a1's publish on n1")
	require.Len(t, e.Replies, 1)
	require.Equal(t, "/dev/a1", e.Replies[0].Claim.GetPublishContext()["dev"])

	step(t, s, releaseRequested{AllocID: "a1"})
	e = step(t, s, nodeDetached{AllocID: "a1"})
	require.Empty(t, e.Controller, "a2 still uses the attachment on n1")
	require.Equal(t, []string{"a1:node-detached", "a1:controller-detached", "a1:freed"}, proposedStates(e))
	require.Equal(t, state.ReasonControllerNotNeeded, e.Transitions[1].Why)

	step(t, s, releaseRequested{AllocID: "a2"})
	e = step(t, s, nodeDetached{AllocID: "a2"})
	require.Equal(t, []string{"controller-unpublish a2"}, opNames(e.Controller))
}

func TestRefusedInputChangesNothing(t *testing.T) {
	s := publishedState(t, "a1")
	before := s.Volume()
	_, err := s.Step(claimRequested{Claim: testClaim("a2", "n2", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	require.ErrorIs(t, err, state.ErrClaimConflict)
	_, err = s.Step(controllerPublished{AllocID: "a1"})
	require.ErrorIs(t, err, errUnexpectedResult)
	require.Equal(t, before.String(), s.Volume().String())
}

// publishedState is a controller volume with alloc's write claim usable
// on n1 (publish context dev=/dev/<alloc>).
func publishedState(t *testing.T, alloc string) *volumeState {
	t.Helper()
	s := newVolumeState(testVolume("v", true))
	step(t, s, claimRequested{Claim: testClaim(alloc, "n1", state.ModeWrite, messages.CSIAccessSingleNodeWriter)})
	step(t, s, controllerPublished{AllocID: alloc, PublishContext: map[string]string{"dev": "/dev/" + alloc}})
	return s
}

// detachingState has alloc's ControllerUnpublish in flight.
func detachingState(t *testing.T, alloc string) *volumeState {
	t.Helper()
	s := publishedState(t, alloc)
	step(t, s, releaseRequested{AllocID: alloc})
	e := step(t, s, nodeDetached{AllocID: alloc})
	require.Equal(t, []string{"controller-unpublish " + alloc}, opNames(e.Controller))
	return s
}

func TestVolumeUpdatedKeepsClaims(t *testing.T) {
	s := publishedState(t, "a1")
	upd := testVolume("v", true)
	upd.Schedulable = false
	upd.ControllersHealthy = 2
	step(t, s, volumeUpdated{Volume: upd})
	v := s.Volume()
	require.False(t, v.GetSchedulable())
	require.EqualValues(t, 2, v.GetControllersHealthy())
	require.Len(t, v.GetClaims(), 1)
	require.Equal(t, messages.CSIAccessSingleNodeWriter, v.GetAccessMode())
	_, err := s.Step(volumeUpdated{Volume: &messages.CSIVolume{ID: "other"}})
	require.Error(t, err)
}

// TestPublishedClaimGetsControllerUnpublishWhenThePluginLooksControllerless:
// the plugin's controller instances can vanish from the servers' view (a
// restarting client re-fingerprints them), which clears the volume's
// ControllerRequired. A claim that ControllerPublish attached is still
// unpublished by the controller, never freed behind its back.
func TestPublishedClaimGetsControllerUnpublishWhenThePluginLooksControllerless(t *testing.T) {
	for _, when := range []string{"before release", "after node detach", "on resume"} {
		t.Run(when, func(t *testing.T) {
			s := publishedState(t, "a1")
			controllerless := testVolume("v", false)
			if when == "before release" {
				step(t, s, volumeUpdated{Volume: controllerless})
			}
			step(t, s, releaseRequested{AllocID: "a1"})
			var e effects
			switch when {
			case "on resume":
				step(t, s, volumeUpdated{Volume: controllerless})
				s = newVolumeState(s.Volume())
				e = step(t, s, resume{})
				require.Empty(t, e.Controller, "the node side comes first")
				e = step(t, s, nodeDetached{AllocID: "a1"})
			default:
				e = step(t, s, nodeDetached{AllocID: "a1"})
				if when == "after node detach" {
					require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller))
					step(t, s, volumeUpdated{Volume: controllerless})
					require.Equal(t, "node-detached", states(s)["a1"], "still waiting for the controller")
					return
				}
			}
			require.Equal(t, []string{"a1:node-detached"}, proposedStates(e))
			require.Equal(t, []string{"controller-unpublish a1"}, opNames(e.Controller))
		})
	}
}
