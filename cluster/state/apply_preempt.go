package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// Preemption values the FSM writes and reads (a preempted allocation
// gets desired status messages.AllocDesiredStatusEvict).
const (
	// EvalTriggerPreemption is the trigger of the evaluations a plan
	// carries for the jobs whose allocations it preempts; the FSM stores
	// one only when a preemption of its job was applied.
	EvalTriggerPreemption = "preemption"
)

// evictions are the preemptions one placement of a plan depends on, as
// checked against the store: the stored allocations they evict and what
// those hold on the placement's node.
type evictions struct {
	updates        []*messages.AllocStopUpdate
	ids            map[string]bool
	cpu, mem, disk int64
}

func (e *evictions) has(id string) bool { return e != nil && e.ids[id] }

// freed is what the evictions give back on the node (zero for none).
func (e *evictions) freed() (cpu, mem, disk int64) {
	if e == nil {
		return 0, 0, 0
	}
	return e.cpu, e.mem, e.disk
}

// preemptionsByAlloc groups a plan's preemptions by the placement they
// make room for (PreemptedByAllocation); one that names no placement of
// the plan is never applied.
func preemptionsByAlloc(c *messages.ApplyPlan) map[string][]*messages.AllocStopUpdate {
	if len(c.GetPreemptions()) == 0 {
		return nil
	}
	out := map[string][]*messages.AllocStopUpdate{}
	for _, p := range c.GetPreemptions() {
		out[p.GetPreemptedByAllocation()] = append(out[p.GetPreemptedByAllocation()], p)
	}
	return out
}

// checkEvictions re-checks the preemptions placement a depends on: each
// must evict an allocation that is stored, still meant to run, not over
// on its client, and on a's node. Otherwise the scheduler's view was
// stale (it ended, or another plan evicted it) and a is refused with
// them. Nil with no error when a preempts nothing.
func (w *writeTxn) checkEvictions(a *messages.Allocation, ups []*messages.AllocStopUpdate) (*evictions, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	ev := &evictions{updates: ups, ids: make(map[string]bool, len(ups))}
	for _, up := range ups {
		o := w.read().AllocByID(up.GetAllocID())
		switch {
		case o == nil:
			return nil, fmt.Errorf("%w: preempted allocation %s is unknown", ErrPlacementRefused, up.GetAllocID())
		case o.TerminalStatus() || o.DesiredStatus != messages.AllocDesiredStatusRun:
			return nil, fmt.Errorf("%w: preempted allocation %s is %s/%s now", ErrPlacementRefused, o.ID, o.DesiredStatus, o.ClientStatus)
		case o.NodeID != a.GetNodeID():
			return nil, fmt.Errorf("%w: preempted allocation %s runs on node %s, not %s", ErrPlacementRefused, o.ID, o.NodeID, a.GetNodeID())
		case ev.ids[o.ID]:
			continue
		}
		ev.ids[o.ID] = true
		cpu, mem, disk := AllocResources(o)
		ev.cpu, ev.mem, ev.disk = ev.cpu+cpu, ev.mem+mem, ev.disk+disk
	}
	return ev, nil
}

// evict applies the checked preemptions of a placement and records each
// evicted allocation's job in jobs.
func (w *writeTxn) evict(ev *evictions, jobs map[jobRef]bool) {
	if ev == nil {
		return
	}
	for _, up := range ev.updates {
		o := w.read().AllocByID(up.GetAllocID())
		if o == nil || o.TerminalStatus() {
			continue // named twice
		}
		s := &messages.AllocStopUpdate{AllocID: o.ID, DesiredStatus: messages.AllocDesiredStatusEvict,
			DesiredDescription: up.GetDesiredDescription(), PreemptedByAllocation: up.GetPreemptedByAllocation()}
		w.stopAlloc(s)
		jobs[jobRef{o.Namespace, o.JobID}] = true
	}
}

// preemptionEvals keeps the plan's new evaluations, less those for
// preempted jobs (EvalTriggerPreemption) that lost no allocation.
func preemptionEvals(evals []*messages.Evaluation, jobs map[jobRef]bool) []*messages.Evaluation {
	out := evals[:0:0]
	for _, e := range evals {
		if e.GetTriggeredBy() == EvalTriggerPreemption && !jobs[jobRef{e.GetNamespace(), e.GetJobID()}] {
			continue
		}
		out = append(out, e)
	}
	return out
}
