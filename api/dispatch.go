package api

import (
	"net/http"
	"net/url"
)

// JobDispatchRequest is the body of PUT /v1/job/:id/dispatch (Nomad's
// shape: Payload is base64 in JSON).
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte
	Meta             map[string]string
	IdPrefixTemplate string
	Priority         int `json:",omitempty"`
}

// JobDispatchResponse answers PUT /v1/job/:id/dispatch.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	Index           uint64
}

// Dispatch creates a child of parameterized job jobID with payload and
// meta; a non-empty idempotencyToken returns the child an earlier
// dispatch with the same token created instead of a new one.
func (j *Jobs) Dispatch(jobID string, meta map[string]string, payload []byte, idPrefixTemplate, idempotencyToken string, w *WriteOptions) (*JobDispatchResponse, *WriteMeta, error) {
	return j.DispatchRequest(&JobDispatchRequest{JobID: jobID, Payload: payload, Meta: meta, IdPrefixTemplate: idPrefixTemplate},
		idempotencyToken, w)
}

// DispatchRequest is Dispatch with the whole request (a priority too).
func (j *Jobs) DispatchRequest(in *JobDispatchRequest, idempotencyToken string, w *WriteOptions) (*JobDispatchResponse, *WriteMeta, error) {
	var params url.Values
	if idempotencyToken != "" {
		params = url.Values{"idempotency_token": {idempotencyToken}}
	}
	var out JobDispatchResponse
	wm, err := j.c.writeParams(http.MethodPut, "/v1/job/"+escape(in.JobID)+"/dispatch", params, in, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
