package messages

// ClearServerFields zeroes in j what the servers set on a job rather than
// its author: the version, the indexes, the submit time, the status and
// stability. Two jobs equal after it are the same submission.
func ClearServerFields(j *Job) {
	j.Version, j.CreateIndex, j.ModifyIndex, j.JobModifyIndex, j.SubmitTime = 0, 0, 0, 0, 0
	j.Status, j.StatusDescription, j.Stable = "", "", false
	j.MultiregionRollout = ""
}

// IsParameterized reports whether j is a parameterized job that
// dispatches run (a dispatched child is not one, as in Nomad).
func (j *Job) IsParameterized() bool {
	return j.GetParameterizedJob() != nil && !j.GetDispatched()
}

// IsParent reports whether j is a job whose children run instead of it:
// an enabled periodic job or a parameterized one. The scheduler places
// nothing for it and registering it queues no evaluation.
func (j *Job) IsParent() bool {
	return j.GetPeriodic().GetEnabled() || j.IsParameterized()
}
