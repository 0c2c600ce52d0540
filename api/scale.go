package api

import "net/http"

// ScalingRequest is the body of PUT /v1/job/:id/scale: Target names the
// group ("Group"; optional for a job with one group).
type ScalingRequest struct {
	Count   *int64
	Target  map[string]string
	Message string
	Error   bool
	Meta    map[string]any
	// JobModifyIndex, when not 0, scales only a job still at this index.
	JobModifyIndex uint64
}

// JobScaleStatusResponse answers GET /v1/job/:id/scale.
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
}

// TaskGroupScaleStatus is one group's counts. troupe has no deployments:
// Healthy and Unhealthy stay 0.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
}

// Scale sets the count of a job's group (PUT /v1/job/:id/scale); group
// may be "" for a job with one group. The answer names the evaluation.
func (j *Jobs) Scale(jobID, group string, count int64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	req := &ScalingRequest{Count: &count, Target: map[string]string{"Job": jobID}}
	if group != "" {
		req.Target["Group"] = group
	}
	var out JobRegisterResponse
	wm, err := j.c.write(http.MethodPut, "/v1/job/"+escape(jobID)+"/scale", req, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// ScaleStatus reads each group's desired, placed and running counts (GET
// /v1/job/:id/scale).
func (j *Jobs) ScaleStatus(jobID string, q *QueryOptions) (*JobScaleStatusResponse, *QueryMeta, error) {
	var out JobScaleStatusResponse
	qm, err := j.c.query("/v1/job/"+escape(jobID)+"/scale", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}
