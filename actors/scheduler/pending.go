package scheduler

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// Pending is what plans proposed but not yet committed place, by node.
// The scheduler actor plans the next evaluation while the last plan is
// still on its way through raft; Process counts the pending placements
// as used (resources, ports, devices) so that the two plans do not pick
// the same room. It is only an estimate: the plan applier re-checks
// every placement against the committed state, and the actor plans an
// evaluation again, alone, when one planned over pending placements
// failed to place something (the pending ones may have been counted
// twice, or refused).
//
// A nil *Pending has nothing pending.
type Pending struct {
	byNode map[string][]*messages.Allocation
}

// newPending returns an empty Pending.
func newPending() *Pending {
	return &Pending{byNode: map[string][]*messages.Allocation{}}
}

// Add records plan's placements as pending.
func (p *Pending) Add(plan *messages.ApplyPlan) {
	for _, a := range plan.GetPlace() {
		p.byNode[a.NodeID] = append(p.byNode[a.NodeID], a)
	}
}

// Remove forgets plan's placements (the plan was committed or failed).
func (p *Pending) Remove(plan *messages.ApplyPlan) {
	for _, a := range plan.GetPlace() {
		on := p.byNode[a.NodeID]
		i := slices.Index(on, a)
		if i < 0 {
			continue
		}
		if len(on) == 1 {
			delete(p.byNode, a.NodeID)
		} else {
			p.byNode[a.NodeID] = slices.Delete(on, i, i+1)
		}
	}
}

// On returns the placements pending on a node.
func (p *Pending) On(nodeID string) []*messages.Allocation {
	if p == nil {
		return nil
	}
	return p.byNode[nodeID]
}

// eachNode calls fn with each node that has pending placements.
func (p *Pending) eachNode(fn func(nodeID string)) {
	if p == nil {
		return
	}
	for id := range p.byNode {
		fn(id)
	}
}

// nodeAllocs is what runs or is about to run on a node: the snapshot's
// allocations and the pending placements.
func (p *planner) nodeAllocs(nodeID string) []*messages.Allocation {
	allocs := p.snap.AllocsByNode(nodeID)
	if pend := p.opts.Pending.On(nodeID); len(pend) > 0 {
		allocs = append(slices.Clip(allocs), pend...)
	}
	return allocs
}

// planFailed reports whether plan left a group's allocations unplaced.
func planFailed(plan *messages.ApplyPlan) bool {
	return len(plan.GetEvalUpdate().GetFailedTGAllocs()) > 0
}
