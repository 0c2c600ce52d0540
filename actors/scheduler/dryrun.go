package scheduler

import (
	"math/rand/v2"

	"github.com/troupe-dev/troupe/messages"
)

// DesiredUpdates counts what a plan does to one task group's allocations,
// in Nomad's terms (its PlanAnnotations.DesiredTGUpdates).
type DesiredUpdates struct {
	Ignore            uint64 // live allocations left as they are
	Place             uint64 // new allocations
	Migrate           uint64 // moved off a draining node
	Stop              uint64 // stopped, not replaced
	InPlaceUpdate     uint64 // updated where they run
	DestructiveUpdate uint64 // stopped and replaced by the new version
	Canary            uint64
	Preemptions       uint64
}

// DryRunResult is what registering a job would make the scheduler do.
type DryRunResult struct {
	// Plan is the plan the scheduler computed; nothing was proposed.
	Plan *messages.ApplyPlan
	// Updates counts the plan per task group.
	Updates map[string]*DesiredUpdates
	// Failed are the groups' placement failures, as in the evaluation.
	Failed map[string]*messages.AllocMetric
}

// DryRun runs Process for eval as if job were already stored in snap
// (job as the state store would keep it: see state.Registered; it goes
// in as Options.Job, so every optional interface of snap, CSI volumes
// included, is seen) and counts the resulting plan per task group. Like
// Process it changes nothing and does no I/O. Without NewID or Rand in
// opts it uses random UUIDs and a Rand seeded from opts.Now, as the
// scheduler actor does.
func DryRun(snap Snapshot, job *messages.Job, eval *messages.Evaluation, opts Options) (*DryRunResult, error) {
	opts.Job, opts.ScoreMetaData = job, true
	if opts.NewID == nil {
		opts.NewID = newID
	}
	if opts.Rand == nil {
		seed := uint64(opts.Now.UnixNano())
		opts.Rand = rand.New(rand.NewPCG(seed, seed>>1))
	}
	plan, err := process(snap, eval, opts)
	if err != nil {
		return nil, err
	}
	return &DryRunResult{Plan: plan, Updates: countUpdates(snap, job, plan),
		Failed: plan.GetEvalUpdate().GetFailedTGAllocs()}, nil
}

// countUpdates classifies the plan's placements and stops per group.
func countUpdates(snap Snapshot, job *messages.Job, plan *messages.ApplyPlan) map[string]*DesiredUpdates {
	out := map[string]*DesiredUpdates{}
	group := func(name string) *DesiredUpdates {
		if out[name] == nil {
			out[name] = &DesiredUpdates{}
		}
		return out[name]
	}
	for _, tg := range job.GetTaskGroups() {
		group(tg.GetName())
	}
	live := map[string]*messages.Allocation{}
	for _, a := range snap.AllocsByJob(job.GetNamespace(), job.GetID()) {
		if !a.TerminalStatus() {
			live[a.GetID()] = a
		}
	}
	touched := map[string]bool{}
	replaced := map[string]uint64{} // per group: placements that replace a stopped allocation
	for _, s := range plan.GetStop() {
		a := live[s.GetAllocID()]
		if a == nil {
			continue
		}
		touched[a.GetID()] = true
		u := group(a.GetTaskGroup())
		switch s.GetDesiredDescription() {
		case descUpdating:
			u.DestructiveUpdate++
			replaced[a.GetTaskGroup()]++
		case descMigrating:
			u.Migrate++
			replaced[a.GetTaskGroup()]++
		default:
			u.Stop++
		}
	}
	for _, a := range plan.GetPlace() {
		u := group(a.GetTaskGroup())
		if live[a.GetID()] != nil {
			touched[a.GetID()] = true
			u.InPlaceUpdate++
			continue
		}
		if replaced[a.GetTaskGroup()] > 0 {
			replaced[a.GetTaskGroup()]--
			continue
		}
		u.Place++
	}
	for id, a := range live {
		if !touched[id] {
			group(a.GetTaskGroup()).Ignore++
		}
	}
	countPreemptions(plan, group)
	return out
}
