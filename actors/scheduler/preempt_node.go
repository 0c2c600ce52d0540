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
	victims  map[int][]victim         // pool index -> candidates, sorted
	examined int32                    // nodes weighed since the last takeExamined
	evicted  []*messages.Job          // jobs this plan preempts, in order
	seen     map[string]bool          // their keys
}

func (p *planner) preemptor() *preemptor {
	if p.evict == nil {
		p.evict = &preemptor{jobs: map[string]*messages.Job{}, victims: map[int][]victim{}, seen: map[string]bool{}}
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
// at least PreemptionPriorityGap below the job's, and not stopped or
// preempted by this plan already.
func (p *planner) victims(idx int) []victim {
	e := p.preemptor()
	vs, ok := e.victims[idx]
	if !ok {
		for _, a := range p.snap.AllocsByNode(p.pool[idx].ID) {
			if terminal(a) || (a.Namespace == p.job.Namespace && a.JobID == p.job.ID) {
				continue
			}
			j := e.job(p.snap, a.Namespace, a.JobID)
			if j == nil || p.job.Priority-j.Priority < PreemptionPriorityGap {
				continue
			}
			vs = append(vs, victim{alloc: a, prio: j.Priority, res: allocResources(a)})
		}
		sortVictims(vs)
		e.victims[idx] = vs
	}
	for i, v := range vs {
		if p.stopped[v.alloc.ID] {
			return p.dropStopped(vs, i)
		}
	}
	return vs
}

// dropStopped copies vs (which is cached) without the victims, from
// index from on, that this plan stopped or preempted.
func (p *planner) dropStopped(vs []victim, from int) []victim {
	out := slices.Clone(vs[:from])
	for _, v := range vs[from+1:] {
		if !p.stopped[v.alloc.ID] {
			out = append(out, v)
		}
	}
	return out
}

// preemptOnNode finds the allocations to evict on pool node idx so that
// gs fits there: every holder of a static port gs asks for, then by
// chooseVictims what frees the CPU, memory and disk that are missing,
// then, while gs's dynamic ports or devices still do not fit, the lowest
// priority holders of ports or devices. False when no set makes room.
func (p *planner) preemptOnNode(gs *groupState, idx int) ([]victim, bool) {
	u := p.nodeUsage(idx)
	ask := gs.ask
	if ask.cpu > u.cap.cpu || ask.mem > u.cap.mem || (ask.disk > 0 && ask.disk > u.cap.disk) {
		return nil, false // would not fit on the empty node
	}
	vs := p.victims(idx)
	if len(vs) == 0 {
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
