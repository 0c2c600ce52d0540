package api

import (
	"net/http"

	"github.com/troupe-dev/troupe/jobdiff"
	"github.com/troupe-dev/troupe/messages"
)

// JobVersionsResponse answers GET /v1/job/:id/versions: the stored
// versions, newest first, and with ?diffs=true each one's difference from
// the version before it (Diffs[i]: Versions[i+1] to Versions[i]).
type JobVersionsResponse struct {
	Versions []*messages.Job
	Diffs    []*jobdiff.JobDiff
}

// JobRevertRequest is the body of PUT /v1/job/:id/revert.
type JobRevertRequest struct {
	JobID      string
	JobVersion uint64
	// EnforcePriorVersion, when set, must be the job's current version.
	EnforcePriorVersion *uint64
}

// Versions reads a job's stored versions, newest first, with their diffs
// when diffs is set.
func (j *Jobs) Versions(jobID string, diffs bool, q *QueryOptions) (*JobVersionsResponse, *QueryMeta, error) {
	if diffs {
		q = withParam(q, "diffs", "true")
	}
	var out JobVersionsResponse
	qm, err := j.c.query("/v1/job/"+escape(jobID)+"/versions", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Revert registers the spec of a stored version of the job again, as a
// new version (PUT /v1/job/:id/revert).
func (j *Jobs) Revert(jobID string, version uint64, enforcePriorVersion *uint64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var out JobRegisterResponse
	req := &JobRevertRequest{JobID: jobID, JobVersion: version, EnforcePriorVersion: enforcePriorVersion}
	wm, err := j.c.write(http.MethodPut, "/v1/job/"+escape(jobID)+"/revert", req, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
