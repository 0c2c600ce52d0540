package state

import (
	"fmt"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/troupe-dev/troupe/messages"
)

// keyPlanEvaluate is Nomad's nomad.nomad.plan.evaluate: how long checking
// a plan against the state took. The FSM checks each placement as it
// writes it, so it times the whole apply of the plan.
var keyPlanEvaluate = []string{"nomad", "plan", "evaluate"}

// applyPlan commits a scheduler's plan: stops first (what they free counts
// for the placements), then every placement that still fits its node
// (CPU, memory, disk, host ports and device instances), counting what its
// preemptions free (a placement whose preemptions no longer hold is
// refused with them), then the evaluation update and the new evaluations
// (those for preempted jobs only when one of their allocations was
// evicted).
func applyPlan(w *writeTxn, c *messages.ApplyPlan) any {
	defer metrics.MeasureSince(keyPlanEvaluate, time.Now())
	res := &messages.ApplyPlanResult{Index: w.index}
	for _, s := range c.GetStop() {
		w.stopAlloc(s)
	}
	nodes := map[string]*messages.Node{}
	var share planShare
	preempts, preempted := preemptionsByAlloc(c), map[jobRef]bool{}
	for _, a := range c.GetPlace() {
		old := w.read().AllocByID(a.ID)
		ev, err := w.checkEvictions(a, preempts[a.ID])
		if err == nil {
			err = w.fits(a, old, nodes, ev)
		}
		if err != nil {
			w.log.Debug("plan placement refused", "alloc", a.ID, "eval", c.EvalID, "err", err)
			res.Refused = append(res.Refused, a.ID)
			continue
		}
		share.alloc(a, nodes[a.NodeID])
		w.evict(ev, preempted)
		w.placeAlloc(a, old)
		res.Placed = append(res.Placed, a.ID)
	}
	w.putEval(c.GetEvalUpdate())
	w.putEvals(preemptionEvals(c.GetNewEvals(), preempted))
	return res
}

// fits checks a placement against its node as the store has it now; old
// is the stored allocation with the same ID, if any. nodes caches lookups.
//
// An in-place update (old is live on the same node) is already there: the
// node's eligibility is not checked, nor is capacity when the update asks
// for no more than old held, nor the ports and devices old already holds.
// Otherwise a node that turned ineligible, shrank or lost a GPU's health
// would refuse, plan after plan, an update that takes nothing new. What
// ev (the placement's checked preemptions, nil for none) evicts is free.
func (w *writeTxn) fits(a, old *messages.Allocation, nodes map[string]*messages.Node, ev *evictions) error {
	n, ok := nodes[a.NodeID]
	if !ok {
		n = w.node(a.NodeID)
		nodes[a.NodeID] = n
	}
	// Past the first two cases, old is nil or live on a's node: an
	// in-place update.
	switch {
	case old != nil && (old.TerminalStatus() || old.DesiredStatus != messages.AllocDesiredStatusRun):
		// The scheduler saw it live; it was stopped or ended since. An
		// update must not bring it back.
		return fmt.Errorf("%w: allocation %s is %s/%s now", ErrPlacementRefused, old.ID, old.DesiredStatus, old.ClientStatus)
	case old != nil && old.NodeID != a.NodeID:
		return fmt.Errorf("%w: allocation %s runs on node %s, not %s", ErrPlacementRefused, old.ID, old.NodeID, a.NodeID)
	case n == nil:
		return fmt.Errorf("%w: %q", ErrNodeNotFound, a.NodeID)
	case n.Status != messages.NodeStatusReady:
		return fmt.Errorf("%w: node %s is %s", ErrPlacementRefused, n.ID, n.Status)
	case n.SchedulingEligibility == messages.NodeSchedulingIneligible && old == nil:
		return fmt.Errorf("%w: node %s is ineligible", ErrPlacementRefused, n.ID)
	}
	fillAllocatedResources(a)
	capCPU, capMem, capDisk := NodeCapacity(n)
	u := w.nodeUsage(n.ID)
	freeCPU, freeMem, freeDisk := ev.freed()
	usedCPU, usedMem, usedDisk := u.CPU-freeCPU, u.MemoryMB-freeMem, u.DiskMB-freeDisk
	cpu, mem, disk := AllocResources(a)
	if old != nil {
		oldCPU, oldMem, oldDisk := AllocResources(old) // replaced in place: its share is freed
		if cpu <= oldCPU && mem <= oldMem && disk <= oldDisk {
			return w.conflicts(a, old, n, ev)
		}
		usedCPU, usedMem, usedDisk = usedCPU-oldCPU, usedMem-oldMem, usedDisk-oldDisk
	}
	// Disk counts only when the alloc asks for some, as in the scheduler.
	if usedCPU+cpu > capCPU || usedMem+mem > capMem || (disk > 0 && usedDisk+disk > capDisk) {
		return fmt.Errorf("%w: node %s has %d MHz/%d MB/%d MB disk free, alloc needs %d/%d/%d",
			ErrPlacementRefused, n.ID, capCPU-usedCPU, capMem-usedMem, capDisk-usedDisk, cpu, mem, disk)
	}
	return w.conflicts(a, old, n, ev)
}

// placeAlloc stores a placement; one with the ID of a stored allocation
// replaces it (an in-place update) and keeps its creation and client side.
func (w *writeTxn) placeAlloc(a, old *messages.Allocation) {
	if a.Job != nil {
		a.JobVersion = a.Job.Version
		a.Job = nil
	}
	if a.DesiredStatus == "" {
		a.DesiredStatus = messages.AllocDesiredStatusRun
	}
	a.CreateIndex, a.ModifyIndex, a.AllocModifyIndex = w.index, w.index, w.index
	if a.CreateTime == 0 {
		a.CreateTime = w.now
	}
	a.ModifyTime = w.now
	if old != nil {
		inheritAlloc(a, old)
		w.ev.nodeChanged(old.NodeID)
	}
	if a.ClientStatus == "" {
		a.ClientStatus = messages.AllocClientStatusPending
	}
	w.putAlloc(old, a)
	w.ev.nodeChanged(a.NodeID)
}

// inheritAlloc keeps what an in-place update does not own: its creation
// and everything the client reports, as stored now (the scheduler's copy
// may be older than the client's last report).
func inheritAlloc(a, old *messages.Allocation) {
	a.CreateIndex, a.CreateTime = old.CreateIndex, old.CreateTime
	a.ClientStatus, a.ClientDescription = old.ClientStatus, old.ClientDescription
	a.TaskStates, a.NetworkStatus, a.VolumeStates = old.TaskStates, old.NetworkStatus, old.VolumeStates
}

// stopAlloc applies one stop update; an unknown allocation is skipped.
func (w *writeTxn) stopAlloc(s *messages.AllocStopUpdate) {
	old := w.read().AllocByID(s.AllocID)
	if old == nil {
		return
	}
	a := copyAlloc(old)
	a.DesiredStatus = s.DesiredStatus
	if a.DesiredStatus == "" {
		a.DesiredStatus = messages.AllocDesiredStatusStop
	}
	a.DesiredDescription = s.DesiredDescription
	if s.PreemptedByAllocation != "" {
		a.PreemptedByAllocation = s.PreemptedByAllocation
	}
	if s.ClientStatus != "" {
		a.ClientStatus = s.ClientStatus
	}
	a.ModifyIndex, a.AllocModifyIndex, a.ModifyTime = w.index, w.index, w.now
	w.putAlloc(old, a)
	w.ev.nodeChanged(a.NodeID)
}
