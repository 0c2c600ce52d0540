package scheduler

import (
	"github.com/troupe-dev/troupe/messages"
)

// Preemption values the scheduler writes.
const (
	// triggerPreemption is the trigger of the evaluation each preempted job
	// gets, so that its evicted allocations are replaced where room is.
	triggerPreemption = "preemption"
	// descPreemptedPrefix starts an evicted allocation's description, as
	// Nomad words it: "Preempted by alloc ID <id>".
	descPreemptedPrefix = "Preempted by alloc ID "
)

// placePreempting places req, which no node could take as it is, on the
// pool node where evicting lower-priority allocations makes room at the
// lowest cost (preemptCost; the first such node in pool order among
// equals). It reports false, evicting nothing, when no node can.
func (p *planner) placePreempting(gs *groupState, req *placeReq) bool {
	p.preemptor().examined = 0
	best, bestCost := -1, preemptCost{}
	var bestSet []victim
	for idx := range p.pool {
		if p.staticReason(gs, idx) >= 0 || p.dynamicReason(gs, idx) >= 0 {
			continue
		}
		var bound *preemptCost
		if best >= 0 {
			bound = &bestCost
		}
		set, ok := p.preemptOnNode(gs, idx, bound)
		if !ok {
			continue
		}
		if c := costOf(set); best < 0 || c.less(bestCost) {
			best, bestCost, bestSet = idx, c, set
		}
	}
	if best < 0 {
		return false
	}
	p.evictAndPlace(gs, req, best, bestSet)
	return true
}

// preemptAt places req on pool node idx (a system job's node, which the
// plain check found full) if evicting lower-priority allocations there
// makes room.
func (p *planner) preemptAt(gs *groupState, req *placeReq, idx int) bool {
	p.preemptor().examined = 0
	set, ok := p.preemptOnNode(gs, idx, nil)
	if !ok {
		return false
	}
	p.evictAndPlace(gs, req, idx, set)
	return true
}

// evictAndPlace takes set off node idx, places req there and records the
// preemptions: each evicted allocation's stop (desired status evict,
// PreemptedByAllocation the new one) in the plan's Preemptions, their IDs
// in the new allocation's PreemptedAllocations, their jobs for an
// evaluation each.
func (p *planner) evictAndPlace(gs *groupState, req *placeReq, idx int, set []victim) {
	p.preemptor().taken(idx, set)
	for _, v := range set {
		p.stopped[v.alloc.ID] = true
		p.addUsage(v.alloc, -1)
	}
	p.placeAt(gs, req, idx)
	a := p.plan.Place[len(p.plan.Place)-1]
	e := p.preemptor()
	for _, v := range set {
		a.PreemptedAllocations = append(a.PreemptedAllocations, v.alloc.ID)
		p.plan.Preemptions = append(p.plan.Preemptions, &messages.AllocStopUpdate{AllocID: v.alloc.ID,
			DesiredStatus: messages.AllocDesiredStatusEvict, DesiredDescription: descPreemptedPrefix + a.ID, PreemptedByAllocation: a.ID})
		if k := jobKey(v.alloc.Namespace, v.alloc.JobID); !e.seen[k] {
			e.seen[k] = true
			e.evicted = append(e.evicted, e.jobs[k])
		}
	}
}

func costOf(set []victim) preemptCost {
	c := preemptCost{count: len(set)}
	for _, v := range set {
		c.prio += int64(v.prio)
	}
	return c
}

// preemptionEvals are the evaluations of the jobs this plan preempts, so
// that their evicted allocations are placed again where room is (the FSM
// keeps one only if its job did lose an allocation).
func (p *planner) preemptionEvals() []*messages.Evaluation {
	if p.evict == nil {
		return nil
	}
	now := p.opts.Now.UnixNano()
	out := make([]*messages.Evaluation, 0, len(p.evict.evicted))
	for _, j := range p.evict.evicted {
		out = append(out, &messages.Evaluation{ID: p.opts.NewID(), Namespace: j.Namespace, Priority: j.Priority,
			Type: j.Type, TriggeredBy: triggerPreemption, JobID: j.ID, JobModifyIndex: j.JobModifyIndex,
			Status: messages.EvalStatusPending, PreviousEval: p.eval.ID, CreateTime: now, ModifyTime: now})
	}
	return out
}

// countPreemptions counts each of plan's preemptions in the group of the
// placement it makes room for (Nomad's DesiredUpdates.Preemptions).
func countPreemptions(plan *messages.ApplyPlan, group func(string) *DesiredUpdates) {
	if len(plan.GetPreemptions()) == 0 {
		return
	}
	groupOf := make(map[string]string, len(plan.GetPlace()))
	for _, a := range plan.GetPlace() {
		groupOf[a.GetID()] = a.GetTaskGroup()
	}
	for _, pr := range plan.GetPreemptions() {
		if g, ok := groupOf[pr.GetPreemptedByAllocation()]; ok {
			group(g).Preemptions++
		}
	}
}
