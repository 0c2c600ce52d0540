package evals

import (
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// JobLister lists the jobs (the state store's snapshot implements it).
type JobLister interface {
	Jobs() []*messages.Job
}

// NodeAllocs reads a node's allocations and their jobs.
type NodeAllocs interface {
	AllocsByNode(nodeID string) []*messages.Allocation
	JobByID(namespace, id string) *messages.Job
}

// ForNodeRegistration is one evaluation per system job that is not
// stopped, so that system jobs land on the node that registered.
func ForNodeRegistration(view JobLister, nodeID string, now time.Time) []*messages.Evaluation {
	var out []*messages.Evaluation
	for _, j := range view.Jobs() {
		if j.GetType() == "system" && !j.GetStop() {
			out = append(out, New(j, nodeUpdate, nodeID, now))
		}
	}
	return out
}

// ForNodeStatus is one evaluation per job with allocations on the node
// that are not over on the client, for a change of the node's status: the
// scheduler marks them lost, replaces them or reconciles them.
func ForNodeStatus(view NodeAllocs, nodeID string, now time.Time) []*messages.Evaluation {
	var out []*messages.Evaluation
	seen := map[string]bool{}
	for _, a := range view.AllocsByNode(nodeID) {
		key := a.GetNamespace() + "/" + a.GetJobID()
		if seen[key] || messages.ClientTerminalStatus(a.GetClientStatus()) {
			continue
		}
		seen[key] = true
		if j := view.JobByID(a.GetNamespace(), a.GetJobID()); j != nil {
			out = append(out, New(j, nodeUpdate, nodeID, now))
		}
	}
	return out
}

// ForNodeDrain is the evaluation of a job whose allocations a node's
// drain moves.
func ForNodeDrain(job *messages.Job, nodeID string, now time.Time) *messages.Evaluation {
	return New(job, nodeDrain, nodeID, now)
}
