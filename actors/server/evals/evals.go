package evals

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/messages"
)

// Trigger says why an evaluation was created (Evaluation.TriggeredBy).
type Trigger string

// The triggers these rules use, spelled as Nomad spells them.
const (
	JobRegister   Trigger = "job-register"
	JobDeregister Trigger = "job-deregister"
	JobScaling    Trigger = "job-scaling"
	AllocStop     Trigger = "alloc-stop"
	PeriodicJob   Trigger = "periodic-job"
	// DeploymentWatcher: a deployment's progress (actors/deployment).
	DeploymentWatcher Trigger = "deployment-watcher"
	nodeUpdate        Trigger = "node-update"
	nodeDrain         Trigger = "node-drain"
	allocFailure      Trigger = "alloc-failure"
	reconnect         Trigger = "reconnect"
	planRefused       Trigger = "plan-refused"
)

// statusPending is a new evaluation's status.
const statusPending = "pending"

// New builds a pending evaluation of job, triggered by trigger (and by
// nodeID when a node's change caused it), stamped with now.
func New(job *messages.Job, trigger Trigger, nodeID string, now time.Time) *messages.Evaluation {
	return &messages.Evaluation{ID: newID(), Namespace: job.GetNamespace(), Priority: job.GetPriority(),
		Type: job.GetType(), TriggeredBy: string(trigger), JobID: job.GetID(), NodeID: nodeID,
		Status: statusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
}

// ForJob is the evaluation of a change an operator made to job (register,
// deregister, scale, stop one of its allocations).
func ForJob(job *messages.Job, trigger Trigger, now time.Time) *messages.Evaluation {
	return New(job, trigger, "", now)
}

// ForPlanRefused is a fresh evaluation of prev's job after the leader
// refused part of prev's plan, to be planned after wait (none when 0).
func ForPlanRefused(prev *messages.Evaluation, wait time.Duration, now time.Time) *messages.Evaluation {
	ev := &messages.Evaluation{ID: newID(), Namespace: prev.GetNamespace(), Priority: prev.GetPriority(),
		Type: prev.GetType(), TriggeredBy: string(planRefused), JobID: prev.GetJobID(), Status: statusPending,
		PreviousEval: prev.GetID(), CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
	if wait > 0 {
		ev.WaitUntil = now.Add(wait).UnixNano()
	}
	return ev
}

// failureDescription says, for the evaluation a failed allocation
// triggers, which allocation failed and why (a csi volume's setup error
// names the volume and the plugin's answer).
func failureDescription(up *messages.Allocation) string {
	why := up.GetClientDescription()
	if why == "" {
		why = "failed"
	}
	return fmt.Sprintf("allocation %s failed: %s", up.GetID(), why)
}

func newID() string {
	id, err := uuid.GenerateUUID()
	if err != nil {
		panic(err) // crypto/rand failed: nothing sensible to do
	}
	return id
}
