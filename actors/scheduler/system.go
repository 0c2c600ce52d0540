package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// runSystem plans a system (or sysbatch) job: one alloc of each group on
// every ready, eligible, feasible node, in node order, with no ranking.
func (p *planner) runSystem() {
	p.buildPool(false)
	sysbatch := p.job.Type == jobTypeSysBatch
	byGroup := map[string]map[string][]*messages.Allocation{}
	for _, a := range p.jobAllocs {
		if !systemHeld(a, sysbatch) {
			continue
		}
		if byGroup[a.TaskGroup] == nil {
			byGroup[a.TaskGroup] = map[string][]*messages.Allocation{}
		}
		byGroup[a.TaskGroup][a.NodeID] = append(byGroup[a.TaskGroup][a.NodeID], a)
	}
	for _, tg := range p.job.TaskGroups {
		gs := p.groups[tg.Name]
		byNode := byGroup[tg.Name]
		for idx, n := range p.pool {
			p.systemNode(gs, idx, byNode[n.ID])
		}
	}
	for _, a := range p.jobAllocs {
		if a.TerminalStatus() {
			continue
		}
		switch {
		case p.groups[a.TaskGroup] == nil:
			p.stop(a, descNotNeeded, "")
		case p.poolIndex(a.NodeID) < 0: // the node is gone
			p.stop(a, descLost, messages.AllocClientStatusLost)
		}
	}
}

// systemHeld: the allocs that stand for a group on their node. Failed or
// lost ones do not, so they are replaced; a sysbatch alloc that completed
// does, so it is not run again.
func systemHeld(a *messages.Allocation, sysbatch bool) bool {
	if sysbatch && a.ClientStatus == messages.AllocClientStatusComplete {
		return true
	}
	return !a.TerminalStatus()
}

// systemNode reconciles one group on one node.
func (p *planner) systemNode(gs *groupState, idx int, allocs []*messages.Allocation) {
	n := p.pool[idx]
	switch {
	case n.Status == messages.NodeStatusDown || (n.Status == messages.NodeStatusDisconnected && p.nodeLost(n.ID, gs.tg)):
		p.stopLive(allocs, descLost, messages.AllocClientStatusLost)
		return
	case n.Status != messages.NodeStatusReady:
		return
	case !inDatacenters(p.job.Datacenters, n.Datacenter) || !inPool(p.pre.pool, n):
		p.stopLive(allocs, descNotNeeded, "")
		return
	case n.SchedulingEligibility != messages.NodeSchedulingEligible || n.Drain:
		for _, a := range allocs {
			if n.Drain && !a.TerminalStatus() && a.GetDesiredTransition().GetMigrate() {
				p.stop(a, descMigrating, "")
			}
		}
		return
	case p.staticReason(gs, idx) >= 0:
		p.stopLive(allocs, descNodeTainted, "")
		return
	}
	if len(allocs) == 0 {
		p.placeOnNode(gs, idx, &placeReq{name: allocName(p.job.ID, gs.tg.Name, 0)})
		return
	}
	p.stopLive(allocs[1:], descNotNeeded, "")
	keep := allocs[0]
	switch {
	case keep.TerminalStatus() || keep.JobVersion == p.job.Version:
	case p.inPlace(gs.tg, keep):
		p.updateInPlace(keep)
	default:
		p.placeOnNode(gs, idx, &placeReq{name: keep.Name, index: keep.Index,
			prev: keep, stopPrev: stopUpdate(keep, descUpdating, "")})
	}
}

func (p *planner) stopLive(allocs []*messages.Allocation, desc, clientStatus string) {
	for _, a := range allocs {
		if !a.TerminalStatus() {
			p.stop(a, desc, clientStatus)
		}
	}
}

// placeOnNode places req on pool node idx if it fits there.
func (p *planner) placeOnNode(gs *groupState, idx int, req *placeReq) {
	if req.stopPrev != nil {
		p.release(req.prev)
	}
	p.metric.reset(len(gs.feas.keys))
	p.metric.evaluated = 1
	dim := ""
	if gs.ports != nil {
		dim = p.portsReason(gs, idx)
	}
	if gs.feas.devices != nil && dim == "" {
		_, dim = p.devicesFit(gs.feas.devices, idx)
	}
	if gs.cores != nil && dim == "" && !p.coresFit(gs.cores, idx) {
		dim = dimCores
	}
	u := p.nodeUsage(idx)
	if d := u.exhausted(p.askOn(gs, idx)); dim == "" && d >= 0 {
		dim = dimNames[d]
	}
	if dim != "" && p.preemption && p.preemptAt(gs, req, idx) {
		return
	}
	if dim != "" {
		if req.stopPrev != nil {
			p.unrelease(req.prev)
		}
		p.failOnNode(gs, dim)
		return
	}
	var s nodeScores // the node's fit, for the alloc's ScoreMetaData
	s.add(scBinPack, p.fitScore(u, p.askOn(gs, idx)))
	p.metric.top.offer(idx, s.norm(), &s)
	p.placeAt(gs, req, idx)
}

// failOnNode records a system placement that did not fit, coalescing the
// failures of a group into one metric.
func (p *planner) failOnNode(gs *groupState, dim string) {
	m := p.failed[gs.tg.Name]
	if m == nil {
		m = &messages.AllocMetric{NodesInPool: p.pre.inPool, NodePool: p.pre.pool,
			ConstraintFiltered: map[string]int32{}, DimensionExhausted: map[string]int32{}}
		p.failed[gs.tg.Name] = m
	} else {
		m.CoalescedFailures++
	}
	m.NodesEvaluated++
	m.NodesPreempted += p.evict.takeExamined()
	m.NodesExhausted++
	m.DimensionExhausted[dim]++
	p.queued[gs.tg.Name]++
}
