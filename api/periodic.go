package api

import "net/http"

// PeriodicForce launches a child of a periodic job now (POST
// /v1/job/:id/periodic/force).
func (j *Jobs) PeriodicForce(jobID string, w *WriteOptions) (*PeriodicForceResponse, *WriteMeta, error) {
	var out PeriodicForceResponse
	wm, err := j.c.write(http.MethodPost, "/v1/job/"+escape(jobID)+"/periodic/force", nil, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
