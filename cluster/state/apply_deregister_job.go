package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyDeregisterJob stops a job (a new version with Stop set) or, with
// Purge, deletes it and its versions; allocations stay until collected.
func applyDeregisterJob(w *writeTxn, c *messages.DeregisterJob) any {
	old := w.read().JobByID(c.Namespace, c.JobID)
	if old == nil {
		return fmt.Errorf("%w: %s in namespace %q", ErrJobNotFound, c.JobID, c.Namespace)
	}
	jmi := old.JobModifyIndex
	w.cancelDeployments(c.Namespace, c.JobID, nil, messages.DeploymentDescStoppedJob)
	switch {
	case c.Purge:
		w.purgeJob(old)
		jmi = w.index
	case !old.Stop:
		j := copyJob(old)
		j.Stop = true
		j.Version++
		j.ModifyIndex, j.JobModifyIndex, j.SubmitTime = w.index, w.index, w.now
		w.putJob(j)
		w.putJobVersion(j)
		jmi = w.index
	}
	if e := c.GetEval(); e != nil {
		e.JobModifyIndex = jmi
		w.putEval(e)
	}
	return &DeregisterJobResult{Index: w.index, JobModifyIndex: jmi, EvalID: c.GetEval().GetID()}
}

func (w *writeTxn) purgeJob(j *messages.Job) {
	for _, v := range w.read().JobVersions(j.Namespace, j.ID) {
		w.delete(tableJobVersions, v)
		w.deleteSubmission(v)
		w.dropVersionWindows(v)
	}
	w.deleteLaunch(j.Namespace, j.ID)
	w.delete(TableJobs, j)
	w.changed[TableJobs] = true
	w.ev.job(JobKey(j.Namespace, j.ID))
}
