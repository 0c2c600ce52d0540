package volume

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// onClaim takes a new claim (or finds the allocation's existing one) and
// answers when it is usable: at once, or after ControllerPublish.
func (s *volumeState) onClaim(e *effects, req *messages.CSIVolumeClaim) error {
	existing, err := state.ClaimsOf(s.vol).Check(req)
	if err != nil {
		return err
	}
	if existing != nil {
		s.answerOrPublish(e, existing)
		return nil
	}
	c := proto.Clone(req).(*messages.CSIVolumeClaim)
	c.SetClaimState(state.ClaimTaken)
	c.PublishContext, c.ControllerPublished, c.NodeAbandoned = nil, false, false
	if s.vol.GetControllerRequired() {
		if sib := s.publishedSibling(c); sib != nil {
			c.ControllerPublished, c.PublishContext = true, cloneContext(sib.GetPublishContext())
		}
	}
	if err := s.propose(e, proposal{Claim: &messages.ClaimVolume{VolumeID: s.vol.GetID(), Claim: c}}); err != nil {
		return err
	}
	s.answerOrPublish(e, s.claim(c.GetAllocationID()))
	return nil
}

// answerOrPublish replies with a usable claim, or starts (or waits on)
// its ControllerPublish.
func (s *volumeState) answerOrPublish(e *effects, c *messages.CSIVolumeClaim) {
	s.waiting[c.GetAllocationID()] = true
	if s.usable(c) {
		s.reply(e, c.GetAllocationID(), c, nil)
		return
	}
	if !s.pending(opControllerPublish, c.GetAllocationID()) {
		s.enqueue(e, s.op(opControllerPublish, c))
	}
}

// onRelease starts unpublishing the allocation's claim. Releasing a claim
// that is already on its way (or gone) does nothing.
func (s *volumeState) onRelease(e *effects, allocID string) error {
	c := s.claim(allocID)
	if c == nil || c.ClaimState() != state.ClaimTaken {
		return nil
	}
	return s.release(e, c)
}

// release moves a taken claim to unpublishing; a claim that never reached
// its node goes on to node-detached and the controller step.
func (s *volumeState) release(e *effects, c *messages.CSIVolumeClaim) error {
	s.reply(e, c.GetAllocationID(), nil, fmt.Errorf("%w: volume %q, alloc %q",
		state.ErrClaimReleasing, s.vol.GetID(), c.GetAllocationID()))
	if err := s.move(e, c, state.ClaimUnpublishing, state.ReasonRelease); err != nil {
		return err
	}
	if s.usable(c) {
		return nil
	}
	if err := s.move(e, c, state.ClaimNodeDetached, state.ReasonNeverPublished); err != nil {
		return err
	}
	return s.controllerStep(e, c)
}

// onNodeGone handles the node's report (state.ReasonNodeDetached) or the
// server's verdict that the node plugin is abandoned (state.ReasonNodeAbandoned):
// the claim reaches node-detached and goes on to the controller step.
func (s *volumeState) onNodeGone(e *effects, allocID string, why state.ClaimReason) error {
	c := s.claim(allocID)
	if c == nil {
		return nil
	}
	if c.ClaimState() == state.ClaimTaken {
		if err := s.release(e, c); err != nil {
			return err
		}
	}
	if c.ClaimState() != state.ClaimUnpublishing {
		return nil
	}
	if err := s.move(e, c, state.ClaimNodeDetached, why); err != nil {
		return err
	}
	return s.controllerStep(e, c)
}

// controllerStep runs for a node-detached claim: ControllerUnpublish,
// unless the volume needs no controller or another claim on the same node
// still uses the attachment; then the claim is freed. A claim the
// controller attached is always unpublished: the volume's
// ControllerRequired follows the plugin instances the servers see now, and
// those vanish for a while (a client restarting, the plugin job being
// replaced). With no controller ever coming back the claim waits;
// `volume deregister -force` is the way out.
func (s *volumeState) controllerStep(e *effects, c *messages.CSIVolumeClaim) error {
	needed := s.vol.GetControllerRequired() || c.GetControllerPublished()
	if !needed || len(s.sameNode(c)) > 0 {
		if err := s.move(e, c, state.ClaimControllerDetached, state.ReasonControllerNotNeeded); err != nil {
			return err
		}
		return s.move(e, c, state.ClaimFreed, state.ReasonFree)
	}
	if !s.pending(opControllerUnpublish, c.GetAllocationID()) && !s.retrying[c.GetAllocationID()] {
		s.enqueue(e, s.op(opControllerUnpublish, c))
	}
	return nil
}

// onResume re-drives every claim that is mid-way. Taken claims wait for
// their allocation to claim again (claims are idempotent); unpublishing
// claims wait for their node, unless they never reached it.
func (s *volumeState) onResume(e *effects) error {
	for _, c := range append([]*messages.CSIVolumeClaim(nil), s.vol.GetClaims()...) {
		if err := s.resumeClaim(e, c); err != nil {
			return err
		}
	}
	s.next(e)
	return nil
}

func (s *volumeState) resumeClaim(e *effects, c *messages.CSIVolumeClaim) error {
	switch c.ClaimState() {
	case state.ClaimUnpublishing:
		if s.usable(c) {
			return nil
		}
		if err := s.move(e, c, state.ClaimNodeDetached, state.ReasonNeverPublished); err != nil {
			return err
		}
		return s.controllerStep(e, c)
	case state.ClaimNodeDetached:
		return s.controllerStep(e, c)
	case state.ClaimControllerDetached:
		return s.move(e, c, state.ClaimFreed, state.ReasonFree)
	}
	return nil
}
