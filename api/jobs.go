package api

import (
	"net/http"
	"net/url"

	"github.com/troupe-dev/troupe/messages"
)

// Jobs is the /v1/jobs and /v1/job/:id family.
type Jobs struct{ c *Client }

// Jobs returns the jobs endpoints.
func (c *Client) Jobs() *Jobs { return &Jobs{c: c} }

// Register submits a job (PUT /v1/jobs); the answer names its evaluation.
func (j *Jobs) Register(job *messages.Job, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.register(&JobRegisterRequest{Job: job}, w)
}

// RegisterRequest registers a job with the options of req (its Job set),
// such as the Submission it comes from.
func (j *Jobs) RegisterRequest(req *JobRegisterRequest, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.register(req, w)
}

// EnforceRegister registers the job only when the stored one's
// JobModifyIndex is modifyIndex (0: the job must not exist yet), as
// `job plan` printed it; otherwise the server answers 409 Conflict.
func (j *Jobs) EnforceRegister(job *messages.Job, modifyIndex uint64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.register(&JobRegisterRequest{Job: job, EnforceIndex: true, JobModifyIndex: modifyIndex}, w)
}

func (j *Jobs) register(req *JobRegisterRequest, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var out JobRegisterResponse
	wm, err := j.c.write(http.MethodPut, "/v1/jobs", req, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// List lists jobs (GET /v1/jobs).
func (j *Jobs) List(q *QueryOptions) ([]*JobListStub, *QueryMeta, error) {
	var out []*JobListStub
	qm, err := j.c.query("/v1/jobs", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one job (GET /v1/job/:id).
func (j *Jobs) Info(id string, q *QueryOptions) (*messages.Job, *QueryMeta, error) {
	var out messages.Job
	qm, err := j.c.query("/v1/job/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Deregister stops a job (DELETE /v1/job/:id), purging it when purge.
func (j *Jobs) Deregister(id string, purge bool, w *WriteOptions) (*JobDeregisterResponse, *WriteMeta, error) {
	return j.DeregisterOpts(id, DeregisterOptions{Purge: purge}, w)
}

// DeregisterOptions are the options of a job stop: Purge removes the job
// from the state; Global stops a multiregion job in all its regions.
type DeregisterOptions struct {
	Purge, Global bool
}

// DeregisterOpts stops (or purges) a job, in every region of a
// multiregion job with Global (DELETE /v1/job/:id?global=true).
func (j *Jobs) DeregisterOpts(id string, o DeregisterOptions, w *WriteOptions) (*JobDeregisterResponse, *WriteMeta, error) {
	params := url.Values{}
	if o.Purge {
		params.Set("purge", "true")
	}
	if o.Global {
		params.Set("global", "true")
	}
	var out JobDeregisterResponse
	wm, err := j.c.writeParams(http.MethodDelete, "/v1/job/"+escape(id), params, nil, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Allocations lists a job's allocations (GET /v1/job/:id/allocations).
func (j *Jobs) Allocations(id string, q *QueryOptions) ([]*AllocListStub, *QueryMeta, error) {
	var out []*AllocListStub
	qm, err := j.c.query("/v1/job/"+escape(id)+"/allocations", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Evaluations lists a job's evaluations (GET /v1/job/:id/evaluations).
func (j *Jobs) Evaluations(id string, q *QueryOptions) ([]*messages.Evaluation, *QueryMeta, error) {
	var out []*messages.Evaluation
	qm, err := j.c.query("/v1/job/"+escape(id)+"/evaluations", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Summary reads a job's per-group alloc counts (GET /v1/job/:id/summary).
func (j *Jobs) Summary(id string, q *QueryOptions) (*JobSummary, *QueryMeta, error) {
	var out JobSummary
	qm, err := j.c.query("/v1/job/"+escape(id)+"/summary", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// ParseHCL turns a job file into a job (POST /v1/jobs/parse).
func (j *Jobs) ParseHCL(src string, canonicalize bool) (*messages.Job, error) {
	return j.ParseHCLRequest(&JobsParseRequest{JobHCL: src, Canonicalize: canonicalize})
}

// ParseHCLRequest is ParseHCL with the file's input variables.
func (j *Jobs) ParseHCLRequest(req *JobsParseRequest) (*messages.Job, error) {
	var out messages.Job
	if _, err := j.c.write(http.MethodPost, "/v1/jobs/parse", req, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
