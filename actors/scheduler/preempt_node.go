package scheduler

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// preemptor is the preemption state of one Process call, made when the
// first placement fails with preemption enabled: nothing of it exists, or
// costs anything, while plain placements succeed.
type preemptor struct {
	jobs     map[string]*messages.Job // job key -> current version (nil: purged)
	victims  [][]victim               // per pool node: candidates, sorted...
	built    []bool                   // ...once read
	examined int32                    // nodes weighed since the last takeExamined
	evicted  []*messages.Job          // jobs this plan preempts, in order
	seen     map[string]bool          // their keys
}

func (p *planner) preemptor() *preemptor {
	if p.evict == nil {
		p.evict = &preemptor{jobs: map[string]*messages.Job{}, seen: map[string]bool{}}
	}
	return p.evict
}

func (e *preemptor) job(snap Snapshot, ns, id string) *messages.Job {
	k := jobKey(ns, id)
	j, ok := e.jobs[k]
	if !ok {
		j = snap.JobByID(ns, id)
		e.jobs[k] = j
	}
	return j
}

// takeExamined is AllocMetric.NodesPreempted of a failed placement: the
// feasible nodes whose lower-priority allocations were weighed, since it
// was last taken, without finding a set that frees enough (0 when the
// job's scheduler does not preempt or no node has such allocations).
func (e *preemptor) takeExamined() int32 {
	if e == nil {
		return 0
	}
	n := e.examined
	e.examined = 0
	return n
}

// victims returns the allocations on pool node idx that the job may
// evict, lowest priority first: live, of another job, whose priority is
// at least preemptionPriorityGap below the job's, and not preempted by
// this plan already (evictAndPlace takes those out).
func (p *planner) victims(idx int) []victim {
	e := p.preemptor()
	if e.victims == nil {
		e.victims = make([][]victim, len(p.pool))
		e.built = make([]bool, len(p.pool))
	}
	if e.built[idx] {
		return e.victims[idx]
	}
	var vs []victim
	for _, a := range p.snap.AllocsByNode(p.pool[idx].ID) {
		if a.TerminalStatus() || p.stopped[a.ID] || (a.Namespace == p.job.Namespace && a.JobID == p.job.ID) {
			continue
		}
		j := e.job(p.snap, a.Namespace, a.JobID)
		if j == nil || p.job.Priority-j.Priority < preemptionPriorityGap {
			continue
		}
		vs = append(vs, victim{alloc: a, prio: j.Priority, res: allocResources(a)})
	}
	sortVictims(vs)
	e.victims[idx], e.built[idx] = vs, true
	return vs
}

// taken drops the victims of set from pool node idx's candidates.
func (e *preemptor) taken(idx int, set []victim) {
	e.victims[idx] = slices.DeleteFunc(e.victims[idx], func(v victim) bool {
		return slices.ContainsFunc(set, func(s victim) bool { return s.alloc.ID == v.alloc.ID })
	})
}

// preemptOnNode finds the allocations to evict on pool node idx so that
// gs fits there: every holder of a static port gs asks for, then by
// chooseVictims what frees the CPU, memory and disk that are missing,
// then, while gs's dynamic ports or devices still do not fit, the lowest
// priority holders of ports or devices. False when no set makes room.
//
// With a best cost found elsewhere (nil: none yet), a node where even
// its cheapest single eviction would not cost less is passed over.
func (p *planner) preemptOnNode(gs *groupState, idx int, best *preemptCost) ([]victim, bool) {
	if gs.cores != nil && !p.coresFit(gs.cores, idx) {
		return nil, false // preemption frees no cores: the group's must be free already
	}
	u := p.nodeUsage(idx)
	ask := p.askOn(gs, idx)
	if ask.cpu > u.cap.cpu || ask.mem > u.cap.mem || (ask.disk > 0 && ask.disk > u.cap.disk) {
		return nil, false // would not fit on the empty node
	}
	vs := p.victims(idx)
	if len(vs) == 0 || (best != nil && !(preemptCost{prio: int64(vs[0].prio), count: 1}).less(*best)) {
		return nil, false
	}
	p.evict.examined++
	need := resources{cpu: u.used.cpu + ask.cpu - u.cap.cpu, mem: u.used.mem + ask.mem - u.cap.mem}
	if ask.disk > 0 {
		need.disk = u.used.disk + ask.disk - u.cap.disk
	}
	must, ok := p.portHolders(gs, idx, vs)
	if !ok {
		return nil, false
	}
	set, ok := chooseVictims(vs, need, must)
	if !ok {
		return nil, false
	}
	if set, ok = p.extendForHoldings(gs, idx, vs, set); !ok || len(set) == 0 {
		return nil, false // no room, or a node the plain pass refused for another reason
	}
	out := make([]victim, len(set))
	for i, k := range set {
		out[i] = vs[k]
	}
	return out, true
}

// portHolders are the victims holding a static port gs asks for; false
// when an allocation that may not be evicted holds one.
func (p *planner) portHolders(gs *groupState, idx int, vs []victim) ([]int, bool) {
	if gs.ports == nil || len(gs.ports.reserved) == 0 {
		return nil, true
	}
	np := p.nodePorts(idx)
	var must []int
	for _, port := range gs.ports.reserved {
		held := np.used[port.Value]
		if held == 0 {
			continue
		}
		for i, v := range vs {
			for hp := range v.alloc.HostPorts() {
				if hp == port.Value {
					held--
					if !slices.Contains(must, i) {
						must = append(must, i)
					}
				}
			}
		}
		if held > 0 {
			return nil, false
		}
	}
	return must, true
}

// extendForHoldings adds to set, lowest priority first, victims holding
// ports or devices until gs's dynamic ports and devices fit beside what
// is left on the node.
func (p *planner) extendForHoldings(gs *groupState, idx int, vs []victim, set []int) ([]int, bool) {
	if gs.ports == nil && gs.feas.devices == nil {
		return set, true
	}
	for next := 0; ; next++ {
		if p.holdingsFit(gs, idx, vs, set) {
			return set, true
		}
		for next < len(vs) && (slices.Contains(set, next) || !holdsAny(vs[next].alloc)) {
			next++
		}
		if next == len(vs) {
			return nil, false
		}
		set = append(set, next)
	}
}

// holdingsFit checks gs's ports and devices on pool node idx as if set
// were evicted.
func (p *planner) holdingsFit(gs *groupState, idx int, vs []victim, set []int) bool {
	p.shiftHoldings(idx, vs, set, -1)
	defer p.shiftHoldings(idx, vs, set, 1)
	if gs.ports != nil && p.portsReason(gs, idx) != "" {
		return false
	}
	if gs.feas.devices != nil {
		if _, k := p.devicesFit(gs.feas.devices, idx); k != "" {
			return false
		}
	}
	return true
}

func (p *planner) shiftHoldings(idx int, vs []victim, set []int, sign int32) {
	for _, k := range set {
		if p.ports != nil {
			p.nodePorts(idx).addAlloc(vs[k].alloc, sign)
		}
		if p.devs != nil {
			p.nodeDevices(idx).addAlloc(vs[k].alloc, sign)
		}
	}
}

// holdsAny reports whether a holds host ports or device instances.
func holdsAny(a *messages.Allocation) bool {
	for range a.HostPorts() {
		return true
	}
	for _, t := range a.GetAllocatedResources().GetTasks() {
		if len(t.GetDevices()) > 0 {
			return true
		}
	}
	return false
}
