package evals

import (
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// AllocView reads allocations and jobs.
type AllocView interface {
	AllocByID(id string) *messages.Allocation
	JobByID(namespace, id string) *messages.Job
}

// ForAllocUpdates is what a client's allocation status updates create:
// one evaluation per job (not stopped) with an allocation that newly
// failed while meant to run (the scheduler decides whether to reschedule
// it) or that comes back from unknown (it settles original against
// replacement). freed says an allocation ended, so blocked evaluations
// may fit now.
func ForAllocUpdates(view AllocView, updates []*messages.Allocation, now time.Time) (out []*messages.Evaluation, freed bool) {
	seen := map[string]bool{}
	for _, up := range updates {
		old := view.AllocByID(up.GetID())
		if old == nil || old.GetClientStatus() == up.GetClientStatus() {
			continue
		}
		freed = freed || messages.ClientTerminalStatus(up.GetClientStatus())
		trigger, why := allocTrigger(old, up)
		key := old.GetNamespace() + "/" + old.GetJobID()
		if trigger == "" || seen[key] {
			continue
		}
		if j := view.JobByID(old.GetNamespace(), old.GetJobID()); j != nil && !j.GetStop() {
			seen[key] = true
			ev := New(j, trigger, "", now)
			ev.StatusDescription = why
			out = append(out, ev)
		}
	}
	return out, freed
}

// allocTrigger is why an allocation's update from its client needs an
// evaluation, "" when it needs none.
func allocTrigger(old, up *messages.Allocation) (Trigger, string) {
	switch {
	case up.GetClientStatus() == "failed" && old.GetDesiredStatus() == "run":
		return allocFailure, failureDescription(up)
	case old.GetClientStatus() == "unknown":
		return reconnect, ""
	}
	return "", ""
}
