package messages

// ClearServerFields zeroes in j what the servers set on a job rather than
// its author: the version, the indexes, the submit time, the status and
// stability. Two jobs equal after it are the same submission.
func ClearServerFields(j *Job) {
	j.Version, j.CreateIndex, j.ModifyIndex, j.JobModifyIndex, j.SubmitTime = 0, 0, 0, 0, 0
	j.Status, j.StatusDescription, j.Stable = "", "", false
}
