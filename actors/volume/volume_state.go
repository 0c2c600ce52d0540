package volume

import (
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Controller operation kinds (ControllerOp.Kind), as messages names them.
const (
	opControllerPublish   = string(messages.ControllerPublish)
	opControllerUnpublish = string(messages.ControllerUnpublish)
	opControllerExpand    = string(messages.ControllerExpand)
	opDeleteVolume        = string(messages.ControllerDeleteVolume)
	opCreateSnapshot      = string(messages.ControllerCreateSnapshot)
	opDeleteSnapshot      = string(messages.ControllerDeleteSnapshot)
)

// volumeState is the volume actor's state: the stored volume as it will
// be once this leader's proposals commit, plus what raft does not hold
// (the controller op in flight and those queued behind it, the claims
// waiting for a reply, retry counts).
//
// At most one controller op is in flight per volume: Step queues the
// others and starts the next when the in-flight one's result comes in.
// Step has no I/O and no clock. When it returns an error the input was
// refused and nothing changed (unless the stored state is corrupt, e.g. a
// claim with an unknown State).
type volumeState struct {
	vol      *messages.CSIVolume
	inFlight *messages.ControllerOp
	queue    []*messages.ControllerOp
	waiting  map[string]bool // allocations (and "" for delete) owed a reply
	attempts map[string]int  // failed ControllerUnpublish attempts per alloc
	retrying map[string]bool // allocations waiting for a RetryDue
	closing  bool            // deregister or delete under way
}

// newVolumeState starts from the stored volume (a copy is kept). Step it
// a Resume to re-drive claims that are mid-way.
func newVolumeState(vol *messages.CSIVolume) *volumeState {
	return &volumeState{
		vol:      proto.Clone(vol).(*messages.CSIVolume),
		waiting:  map[string]bool{},
		attempts: map[string]int{},
		retrying: map[string]bool{},
	}
}

// Volume returns a copy of the volume, proposals included.
func (s *volumeState) Volume() *messages.CSIVolume {
	return proto.Clone(s.vol).(*messages.CSIVolume)
}

// InFlight returns the controller op in flight, or nil.
func (s *volumeState) InFlight() *messages.ControllerOp { return s.inFlight }

// Queued returns the controller ops waiting behind the one in flight.
func (s *volumeState) Queued() []*messages.ControllerOp { return slices.Clone(s.queue) }

// Step applies one input and returns what the actor must do.
func (s *volumeState) Step(in input) (effects, error) {
	if s.closing && !isResult(in) {
		return effects{}, fmt.Errorf("%w: %q", errDeregistered, s.vol.GetID())
	}
	var e effects
	if err := s.dispatch(&e, in); err != nil {
		return effects{}, err
	}
	return e, nil
}

func isResult(in input) bool {
	switch in.(type) {
	case controllerPublished, controllerDetached, controllerFailed, volumeDeleted:
		return true
	}
	return false
}

func (s *volumeState) dispatch(e *effects, in input) error {
	switch m := in.(type) {
	case claimRequested:
		return s.onClaim(e, m.Claim)
	case releaseRequested:
		return s.onRelease(e, m.AllocID)
	case nodeDetached:
		return s.onNodeGone(e, m.AllocID, state.ReasonNodeDetached)
	case nodeAbandoned:
		return s.onNodeGone(e, m.AllocID, state.ReasonNodeAbandoned)
	case controllerPublished:
		return s.onPublished(e, m)
	case controllerDetached:
		return s.onDetached(e, m.AllocID)
	case controllerFailed:
		return s.onFailed(e, m)
	case RetryDue:
		return s.onRetryDue(e, m.AllocID)
	case deregisterRequested:
		return s.onDeregister(e, m.Force)
	case deleteRequested:
		return s.onDelete(e)
	case volumeDeleted:
		return s.onDeleted(e)
	case volumeUpdated:
		return s.onUpdated(m.Volume)
	case resume:
		return s.onResume(e)
	}
	return fmt.Errorf("volume: unknown input %T", in)
}

// claim returns the allocation's claim, or nil.
func (s *volumeState) claim(allocID string) *messages.CSIVolumeClaim {
	return state.ClaimsOf(s.vol).Get(allocID)
}

// usable reports whether a claim may be handed to its node: the volume
// needs no controller, or ControllerPublish succeeded for it.
func (s *volumeState) usable(c *messages.CSIVolumeClaim) bool {
	return !s.vol.GetControllerRequired() || c.GetControllerPublished()
}

// propose records a raft command and applies it to the cached volume
// exactly as the FSM will. The callers checked the claim or transition
// first, so an error here means the cached volume is corrupt.
func (s *volumeState) propose(e *effects, p proposal) error {
	var err error
	switch {
	case p.Claim != nil:
		err = state.ApplyClaimVolume(s.vol, p.Claim, 0)
	case p.UpdateClaim != nil:
		err = state.ApplyUpdateClaimState(s.vol, p.UpdateClaim, 0)
	}
	if err != nil {
		return err
	}
	e.Propose = append(e.Propose, p)
	return nil
}

// move takes claim c along one edge of the transition table and proposes it.
func (s *volumeState) move(e *effects, c *messages.CSIVolumeClaim, to state.ClaimState, why state.ClaimReason) error {
	from, err := state.ParseClaimState(c.GetState())
	if err != nil {
		return err
	}
	if !state.CanClaimTransition(from, to, why) {
		return fmt.Errorf("%w: volume %q alloc %q: %s -> %s (%s)", state.ErrIllegalTransition,
			s.vol.GetID(), c.GetAllocationID(), from, to, why)
	}
	if err := s.propose(e, proposal{UpdateClaim: &messages.UpdateClaimState{
		VolumeID: s.vol.GetID(), AllocationID: c.GetAllocationID(), State: to.String(),
		NodeAbandoned: why == state.ReasonNodeAbandoned,
	}}); err != nil {
		return err
	}
	e.Transitions = append(e.Transitions, state.ClaimTransition{AllocID: c.GetAllocationID(), From: from, To: to, Why: why})
	if to == state.ClaimFreed {
		delete(s.attempts, c.GetAllocationID())
		delete(s.retrying, c.GetAllocationID())
	}
	return nil
}

// reply answers the allocation's waiter, if it has one.
func (s *volumeState) reply(e *effects, allocID string, c *messages.CSIVolumeClaim, err error) {
	if !s.waiting[allocID] {
		return
	}
	delete(s.waiting, allocID)
	if c != nil {
		c = proto.Clone(c).(*messages.CSIVolumeClaim)
	}
	e.Replies = append(e.Replies, reply{AllocID: allocID, Claim: c, Err: err})
}

// sameNode returns the other claims on c's node that still use the
// volume there (taken or unpublishing).
func (s *volumeState) sameNode(c *messages.CSIVolumeClaim) []*messages.CSIVolumeClaim {
	var out []*messages.CSIVolumeClaim
	for _, o := range s.vol.GetClaims() {
		st := o.ClaimState()
		if o.GetAllocationID() != c.GetAllocationID() && o.GetNodeID() == c.GetNodeID() &&
			(st == state.ClaimTaken || st == state.ClaimUnpublishing) {
			out = append(out, o)
		}
	}
	return out
}

// publishedSibling returns a claim on c's node whose controller
// attachment c can share, or nil.
func (s *volumeState) publishedSibling(c *messages.CSIVolumeClaim) *messages.CSIVolumeClaim {
	for _, o := range s.sameNode(c) {
		if o.GetControllerPublished() {
			return o
		}
	}
	return nil
}

func (s *volumeState) onUpdated(v *messages.CSIVolume) error {
	if v.GetID() != s.vol.GetID() {
		return fmt.Errorf("volume: update for %q sent to %q", v.GetID(), s.vol.GetID())
	}
	nv := proto.Clone(v).(*messages.CSIVolume)
	nv.Claims, nv.AccessMode, nv.AttachmentMode = s.vol.Claims, s.vol.AccessMode, s.vol.AttachmentMode
	s.vol = nv
	return nil
}

func cloneContext(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
