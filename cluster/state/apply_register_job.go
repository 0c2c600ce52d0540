package state

import (
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// applyRegisterJob stores a job, as a new version unless it equals the
// current one, and its evaluation.
func applyRegisterJob(w *writeTxn, c *messages.RegisterJob) any {
	j := c.GetJob()
	if j == nil {
		return fmt.Errorf("%w: RegisterJob without a job", ErrBadCommand)
	}
	if err := w.inNamespace(j.Namespace, fmt.Sprintf("job %q", j.ID)); err != nil {
		return err
	}
	if err := w.jobInPool(j); err != nil {
		return err
	}
	old := w.read().JobByID(j.Namespace, j.ID)
	if c.GetEnforceIndex() && old.GetJobModifyIndex() != c.GetJobModifyIndex() {
		// Worded as Nomad's, whose clients look for "Enforcing job modify index".
		if old == nil {
			return fmt.Errorf("%w: Enforcing job modify index %d: job %q does not exist",
				ErrJobModifyIndex, c.GetJobModifyIndex(), j.ID)
		}
		return fmt.Errorf("%w: Enforcing job modify index %d: job %q exists with conflicting job modify index: %d",
			ErrJobModifyIndex, c.GetJobModifyIndex(), j.ID, old.GetJobModifyIndex())
	}
	if l := c.GetLaunch(); l != nil {
		if err := w.launchOf(j, l); err != nil {
			return err
		}
	}
	j = Registered(old, j, w.index, w.now)
	w.putJob(j)
	if j.JobModifyIndex == w.index && old != nil {
		w.cancelDeployments(j.Namespace, j.ID, j, messages.DeploymentDescNewerJob)
	}
	if j.Stop {
		w.cancelDeployments(j.Namespace, j.ID, nil, messages.DeploymentDescStoppedJob)
	}
	if j.JobModifyIndex == w.index {
		w.putJobVersion(j)
		w.putSubmission(j, c.GetSubmission())
	}
	if e := c.GetEval(); e != nil {
		e.JobModifyIndex = j.JobModifyIndex
		w.putEval(e)
	}
	return &RegisterJobResult{Index: w.index, JobModifyIndex: j.JobModifyIndex, EvalID: c.GetEval().GetID()}
}

// Registered is job j as registering it over old (nil: a new job) at raft
// index index and time now (unix nanos) stores it: a new job is version 0;
// a changed one is old's version plus one with a new JobModifyIndex; an
// unchanged one is old as it is. Only ModifyIndex moves in every case.
// j is changed in place unless it equals old. Job plans use it to see the
// job as the scheduler would.
func Registered(old, j *messages.Job, index uint64, now int64) *messages.Job {
	switch {
	case old == nil:
		j.Version, j.CreateIndex, j.JobModifyIndex, j.SubmitTime = 0, index, index, now
		j.Status = messages.JobStatusPending
	case jobSpecEqual(old, j):
		j = copyJob(old)
	default:
		j.Version, j.CreateIndex, j.JobModifyIndex, j.SubmitTime = old.Version+1, old.CreateIndex, index, now
		j.Status = old.Status
	}
	j.ModifyIndex = index
	return j
}

// putJobVersion records a job version and drops the oldest beyond the
// store's job versions.
func (w *writeTxn) putJobVersion(j *messages.Job) {
	w.insert(tableJobVersions, j)
	clear(w.windowOf)
	w.trimVersions(j.Namespace, j.ID, int(w.store.jobVersions.Load()))
}

// trimVersions drops a job's versions beyond the newest keep (at least
// one: the current version stays) and answers how many went.
func (w *writeTxn) trimVersions(ns, id string, keep int) int {
	versions := w.read().JobVersions(ns, id) // newest first
	old := versions[min(len(versions), max(keep, 1)):]
	for _, v := range old {
		w.delete(tableJobVersions, v)
		w.deleteSubmission(v)
		w.dropVersionWindows(v)
	}
	if len(old) > 0 {
		clear(w.windowOf)
	}
	return len(old)
}

// launchOf records the launch that child j is, refused unless j is its
// periodic parent's child and the launch later than the last.
func (w *writeTxn) launchOf(j *messages.Job, l *messages.PeriodicLaunch) error {
	if l.GetNamespace() != j.GetNamespace() || l.GetID() != j.GetParentID() || !strings.HasPrefix(j.GetID(), l.GetID()+PeriodicChildInfix) {
		return fmt.Errorf("%w: launch of %q with child %q", ErrBadCommand, l.GetID(), j.GetID())
	}
	parent := w.read().JobByID(l.Namespace, l.ID)
	if !parent.GetPeriodic().GetEnabled() {
		return fmt.Errorf("%w: job %q is not an enabled periodic job", ErrBadCommand, l.ID)
	}
	return w.putLaunch(l)
}
