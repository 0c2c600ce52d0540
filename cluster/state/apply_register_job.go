package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// maxJobVersions is how many versions of a job the store keeps.
const maxJobVersions = 6

// applyRegisterJob stores a job, as a new version unless it equals the
// current one, and its evaluation.
func applyRegisterJob(w *writeTxn, c *messages.RegisterJob) any {
	j := c.GetJob()
	if j == nil {
		return fmt.Errorf("%w: RegisterJob without a job", ErrBadCommand)
	}
	old := w.read().JobByID(j.Namespace, j.ID)
	switch {
	case old == nil:
		j.Version, j.CreateIndex, j.JobModifyIndex, j.SubmitTime = 0, w.index, w.index, w.now
		j.Status = JobStatusPending
	case jobSpecEqual(old, j):
		j = copyJob(old)
	default:
		j.Version, j.CreateIndex, j.JobModifyIndex, j.SubmitTime = old.Version+1, old.CreateIndex, w.index, w.now
		j.Status = old.Status
	}
	j.ModifyIndex = w.index
	w.putJob(j)
	if j.JobModifyIndex == w.index {
		w.putJobVersion(j)
	}
	if e := c.GetEval(); e != nil {
		e.JobModifyIndex = j.JobModifyIndex
		w.putEval(e)
	}
	return &RegisterJobResult{Index: w.index, JobModifyIndex: j.JobModifyIndex, EvalID: c.GetEval().GetID()}
}

// putJobVersion records a job version and drops the oldest beyond
// maxJobVersions.
func (w *writeTxn) putJobVersion(j *messages.Job) {
	w.insert(tableJobVersions, j)
	versions := w.read().JobVersions(j.Namespace, j.ID) // newest first
	for _, v := range versions[min(len(versions), maxJobVersions):] {
		w.delete(tableJobVersions, v)
	}
}
