package state

import "github.com/troupe-dev/troupe/messages"

// jobTypeBatch is the batch job type, whose evaluations the rules keep
// while the job lives.
const jobTypeBatch = "batch"

// GCCutoffs are the times (unix nanos) before which terminal state may be
// collected: now minus each threshold (Nomad's eval_gc_threshold,
// job_gc_threshold, node_gc_threshold). A forced collection uses now for
// all three.
type GCCutoffs struct {
	Eval, Job, Node int64
}

// The rules below are Nomad's (nomad/core_sched.go), shared by the
// leader's collector, which decides what to propose, and the FSM, which
// re-checks each item when the purge applies: what became live again in
// between (a new allocation, an evaluation reopened) stays.

// AllocCollectable says whether a may be purged: finished on its client
// and last changed no later than cutoff. A failed allocation of a job that
// still runs is kept until its replacement exists (the rescheduler reads
// it), as Nomad keeps allocations it may still reschedule. An allocation
// that still holds a CSI volume claim is kept until the claim is freed:
// the claim goes through the normal release (node unpublish, then
// controller unpublish) while its allocation is there to say whose it is,
// so no claim ever names a collected allocation.
func (s *Snap) AllocCollectable(a *messages.Allocation, cutoff int64) bool {
	if !a.ClientTerminalStatus() || a.ModifyTime > cutoff {
		return false
	}
	if len(s.csiVolumesClaimedBy(a.ID)) > 0 {
		return false
	}
	if a.ClientStatus != messages.AllocClientStatusFailed || a.NextAllocation != "" {
		return true
	}
	j := s.JobByID(a.Namespace, a.JobID)
	return j == nil || j.Stop || j.Status == messages.JobStatusDead
}

// EvalCollectable says whether e may be purged by the evaluation rule
// (eval_gc_threshold): terminal, older than c.Eval, every allocation it
// placed collectable too, and, for a batch job, the job gone or stopped
// and dead (a batch job's finished allocations are what keep it from
// running again; the job rule collects the rest).
func (s *Snap) EvalCollectable(e *messages.Evaluation, c GCCutoffs) bool {
	return s.evalCollectable(e, c.Eval, false)
}

func (s *Snap) evalCollectable(e *messages.Evaluation, cutoff int64, allowBatch bool) bool {
	if !e.TerminalStatus() || e.ModifyTime > cutoff {
		return false
	}
	if e.Type == jobTypeBatch {
		j := s.JobByID(e.Namespace, e.JobID)
		ok := j == nil || (j.Status == messages.JobStatusDead && (j.Stop || allowBatch))
		if !ok {
			return false
		}
	}
	for _, a := range s.AllocsByEval(e.ID) {
		if !s.AllocCollectable(a, cutoff) {
			return false
		}
	}
	return true
}

// JobCollectable says whether j may be purged with its allocations,
// evaluations and versions (job_gc_threshold): a batch job that is dead,
// or any job stopped and dead, submitted no later than c.Job, whose every
// evaluation and allocation is collectable at that cutoff.
func (s *Snap) JobCollectable(j *messages.Job, c GCCutoffs) bool {
	if j.Status != messages.JobStatusDead || (!j.Stop && j.Type != jobTypeBatch) {
		return false
	}
	if j.SubmitTime > c.Job {
		return false
	}
	for _, e := range s.EvalsByJob(j.Namespace, j.ID) {
		if !s.evalCollectable(e, c.Job, true) {
			return false
		}
	}
	for _, a := range s.AllocsByJob(j.Namespace, j.ID) {
		if !s.AllocCollectable(a, c.Job) {
			return false
		}
	}
	return true
}

// NodeCollectable says whether n may be purged (node_gc_threshold): down
// since no later than c.Node and holding no non-terminal allocation
// (counted in O(1) from the node's usage).
func (s *Snap) NodeCollectable(n *messages.Node, c GCCutoffs) bool {
	if n.Status != messages.NodeStatusDown {
		return false
	}
	if n.StatusUpdatedAt*1e9 > c.Node {
		return false
	}
	return s.liveAllocs(n.ID) == 0
}

// PluginCollectable says whether p may be purged: no controller and no
// node instance left, and no volume that names it.
func (s *Snap) PluginCollectable(p *messages.CSIPlugin) bool {
	return len(p.Controllers) == 0 && len(p.Nodes) == 0 && len(s.CSIVolumesByPlugin(p.ID)) == 0
}
