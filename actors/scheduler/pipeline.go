package scheduler

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// defaultPipelineDepth is how many plans the scheduler actor keeps on
// their way through raft at once by default.
//
// Planning an evaluation and committing its plan take about as long
// each; one at a time, the scheduler waits while raft and the FSM work,
// and the FSM waits while the scheduler plans. With a plan in flight the
// actor plans the next evaluation, of another job, counting the pending
// plan's placements as used (Pending). Two evaluations of one job are
// never planned at once (the second would not see the first's
// allocations), and an evaluation that failed to place something while
// plans were in flight is planned again alone, so that a pending plan
// counted twice, or refused, never makes an evaluation block.
//
// Four, not two: with the FSM's nested indexes written on a goroutine of
// their own (cluster/state nested_worker.go) a plan commits in about the
// time one is planned, and with two in flight the FSM often waited for
// the next one to be planned and logged. `troupe bench schedule -nodes
// 10000 -allocs 1000000` (quiet 2-core machine, one run each): depth 2
// 35.4 s and 35.4 s, depth 3 33.0 s and 34.4 s, depth 4 29.1 s, 34.3 s
// and 32.6 s, depth 6 31.6 s; the noise between runs is about 10%.
const defaultPipelineDepth = 4

// pickWindow bounds how far into the queue pick looks for an evaluation
// of a job with no plan in flight.
const pickWindow = 64

// inFlight is the plans on their way through raft.
type inFlight struct {
	jobs    map[string]bool // "namespace/job" of each plan in flight
	pending *Pending
	// alone: the evaluation at the head of the queue waits until no plan
	// is in flight.
	alone bool
}

func evalJob(e *messages.Evaluation) string { return jobKey(e.GetNamespace(), e.GetJobID()) }

func (f *inFlight) busy() bool { return len(f.jobs) > 0 }

// room reports whether another plan may start.
func (f *inFlight) room(depth int) bool {
	if depth <= 0 {
		depth = defaultPipelineDepth
	}
	if f.alone {
		return !f.busy()
	}
	return len(f.jobs) < depth
}

func (f *inFlight) start(e *messages.Evaluation, plan *messages.ApplyPlan) {
	if f.jobs == nil {
		f.jobs, f.pending = map[string]bool{}, newPending()
	}
	f.jobs[evalJob(e)] = true
	f.pending.Add(plan)
	f.alone = false
}

func (f *inFlight) done(e *messages.Evaluation, plan *messages.ApplyPlan) {
	delete(f.jobs, evalJob(e))
	f.pending.Remove(plan)
}

// pick returns the position in the queue of the next evaluation to plan:
// the first whose job has no plan in flight (or that is gone, which plan
// drops), -1 when none within pickWindow.
func (a *Actor) pick() int {
	if !a.flight.busy() {
		return 0
	}
	if a.flight.alone {
		return -1
	}
	view := a.spec.State()
	for i, id := range a.queue[:min(len(a.queue), pickWindow)] {
		e := view.EvalByID(id)
		if e == nil || !a.flight.jobs[evalJob(e)] {
			return i
		}
	}
	return -1
}

// replanAlone puts an evaluation that failed to place something over
// pending placements back at the head of the queue, to be planned again
// once no plan is in flight.
func (a *Actor) replanAlone(id, job string) {
	a.queue = slices.Insert(a.queue, 0, id)
	a.queueAdd(id, job)
	a.flight.alone = true
}
