package volume

import (
	"fmt"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// finish checks that a result is for the op in flight and clears it.
func (s *volumeState) finish(kind, allocID string) (*messages.ControllerOp, error) {
	op := s.inFlight
	if op == nil || (kind != "" && op.GetKind() != kind) || op.GetAllocationID() != allocID {
		return nil, fmt.Errorf("%w: volume %q: %s for alloc %q", errUnexpectedResult, s.vol.GetID(), kind, allocID)
	}
	s.inFlight = nil
	return op, nil
}

func (s *volumeState) onPublished(e *effects, m controllerPublished) error {
	if _, err := s.finish(opControllerPublish, m.AllocID); err != nil {
		return err
	}
	if c := s.claim(m.AllocID); c != nil && c.ClaimState() == state.ClaimTaken {
		if err := s.propose(e, proposal{UpdateClaim: &messages.UpdateClaimState{
			VolumeID: s.vol.GetID(), AllocationID: m.AllocID, State: state.ClaimTaken.String(),
			PublishContext: cloneContext(m.PublishContext), ControllerPublished: true,
		}}); err != nil {
			return err
		}
		s.reply(e, m.AllocID, s.claim(m.AllocID), nil)
	}
	s.next(e)
	return nil
}

func (s *volumeState) onDetached(e *effects, allocID string) error {
	if _, err := s.finish(opControllerUnpublish, allocID); err != nil {
		return err
	}
	if c := s.claim(allocID); c != nil && c.ClaimState() == state.ClaimNodeDetached {
		if err := s.move(e, c, state.ClaimControllerDetached, state.ReasonControllerDetached); err != nil {
			return err
		}
		if err := s.move(e, c, state.ClaimFreed, state.ReasonFree); err != nil {
			return err
		}
	}
	s.next(e)
	return nil
}

// onFailed handles a failed op. A failed publish answers the claim's
// waiter; when it will not heal the claim is released. A failed unpublish
// is retried with backoff when retryable, else reported and left in
// node-detached until a Resume.
func (s *volumeState) onFailed(e *effects, m controllerFailed) error {
	op, err := s.finish("", m.AllocID)
	if err != nil {
		return err
	}
	cerr := &controllerError{Kind: op.GetKind(), VolumeID: s.vol.GetID(), AllocID: m.AllocID,
		Message: m.Message, Retryable: m.Retryable, Code: m.Code}
	switch op.GetKind() {
	case opControllerPublish:
		s.reply(e, m.AllocID, nil, cerr)
		if c := s.claim(m.AllocID); !m.Retryable && c != nil && c.ClaimState() == state.ClaimTaken {
			if err := s.release(e, c); err != nil {
				return err
			}
		}
	case opControllerUnpublish:
		if m.Retryable {
			s.attempts[m.AllocID]++
			s.retrying[m.AllocID] = true
			e.Retry = append(e.Retry, retry{AllocID: m.AllocID, Attempt: s.attempts[m.AllocID]})
		} else {
			e.Failures = append(e.Failures, cerr)
		}
	case opDeleteVolume:
		s.closing = false
		s.reply(e, "", nil, cerr)
	}
	s.next(e)
	return nil
}

func (s *volumeState) onRetryDue(e *effects, allocID string) error {
	if !s.retrying[allocID] {
		return nil
	}
	delete(s.retrying, allocID)
	if c := s.claim(allocID); c != nil && c.ClaimState() == state.ClaimNodeDetached {
		return s.controllerStep(e, c)
	}
	return nil
}

func (s *volumeState) onDeregister(e *effects, force bool) error {
	if err := s.checkUnused(force); err != nil {
		return err
	}
	s.closing, s.queue = true, nil
	e.Propose = append(e.Propose, proposal{Deregister: &messages.DeregisterVolume{VolumeID: s.vol.GetID(), Force: force}})
	return nil
}

// checkUnused refuses when claims remain (with force: taken claims), as
// the FSM will.
func (s *volumeState) checkUnused(force bool) error {
	return state.CheckVolumeUnused(s.vol, force)
}

func (s *volumeState) onDelete(e *effects) error {
	if err := s.checkUnused(false); err != nil {
		return err
	}
	s.closing = true
	s.waiting[""] = true
	s.enqueue(e, s.op(opDeleteVolume, nil))
	return nil
}

func (s *volumeState) onDeleted(e *effects) error {
	if _, err := s.finish(opDeleteVolume, ""); err != nil {
		return err
	}
	e.Propose = append(e.Propose, proposal{Deregister: &messages.DeregisterVolume{VolumeID: s.vol.GetID()}})
	s.reply(e, "", nil, nil)
	return nil
}

// op builds a controller op for claim c (nil for a volume-wide op).
func (s *volumeState) op(kind string, c *messages.CSIVolumeClaim) *messages.ControllerOp {
	return &messages.ControllerOp{
		Kind: kind, PluginID: s.vol.GetPluginID(), VolumeID: s.vol.GetID(),
		ExternalVolumeID: s.vol.GetExternalID(), AllocationID: c.GetAllocationID(),
		NodeID: c.GetNodeID(), ExternalNodeID: c.GetExternalNodeID(),
	}
}

// pending reports whether an op of kind for allocID is in flight or queued.
func (s *volumeState) pending(kind, allocID string) bool {
	match := func(op *messages.ControllerOp) bool {
		return op != nil && op.GetKind() == kind && op.GetAllocationID() == allocID
	}
	if match(s.inFlight) {
		return true
	}
	for _, op := range s.queue {
		if match(op) {
			return true
		}
	}
	return false
}

// enqueue starts op when nothing is in flight, else queues it.
func (s *volumeState) enqueue(e *effects, op *messages.ControllerOp) {
	s.queue = append(s.queue, op)
	s.next(e)
}

// next starts the first queued op that still has work to do, when
// nothing is in flight.
func (s *volumeState) next(e *effects) {
	for s.inFlight == nil && len(s.queue) > 0 {
		op := s.queue[0]
		s.queue = s.queue[1:]
		if s.stale(op) {
			continue
		}
		s.inFlight = op
		e.Controller = append(e.Controller, op)
	}
}

// stale reports whether a queued op lost its reason to run.
func (s *volumeState) stale(op *messages.ControllerOp) bool {
	c := s.claim(op.GetAllocationID())
	switch op.GetKind() {
	case opControllerPublish:
		return c == nil || c.ClaimState() != state.ClaimTaken || c.GetControllerPublished()
	case opControllerUnpublish:
		return c == nil || c.ClaimState() != state.ClaimNodeDetached
	case opDeleteVolume:
		return !s.closing
	}
	return false
}
