package api

import "github.com/troupe-dev/troupe/messages"

// The deployment endpoints' bodies and answers, in Nomad's shapes
// (deployments themselves are messages.Deployment).

// DeploymentPromoteRequest is the body of POST /v1/deployment/promote/:id.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
}

// DeploymentPauseRequest is the body of POST /v1/deployment/pause/:id.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
}

// DeploymentAllocHealthRequest is the body of POST
// /v1/deployment/allocation-health/:id.
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
}

// DeploymentFailRequest is the body of POST /v1/deployment/fail/:id.
type DeploymentFailRequest struct {
	DeploymentID string
}

// DeploymentUpdateResponse answers the deployment writes.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	RevertedJobVersion    *uint64
	Index                 uint64
}

// JobStabilityRequest is the body of PUT /v1/job/:id/stable.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
}

// JobStabilityResponse answers PUT /v1/job/:id/stable.
type JobStabilityResponse struct {
	Index uint64
}

// Deployments is the /v1/deployments and /v1/deployment/* family.
type Deployments struct{ c *Client }

// Deployments returns the deployment endpoints.
func (c *Client) Deployments() *Deployments { return &Deployments{c: c} }

// List lists deployments, newest first (GET /v1/deployments).
func (d *Deployments) List(q *QueryOptions) ([]*messages.Deployment, *QueryMeta, error) {
	var out []*messages.Deployment
	qm, err := d.c.query("/v1/deployments", &out, q)
	return out, qm, err
}

// Info reads one deployment (GET /v1/deployment/:id).
func (d *Deployments) Info(id string, q *QueryOptions) (*messages.Deployment, *QueryMeta, error) {
	var out messages.Deployment
	qm, err := d.c.query("/v1/deployment/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Allocations lists a deployment's allocations.
func (d *Deployments) Allocations(id string, q *QueryOptions) ([]*AllocListStub, *QueryMeta, error) {
	var out []*AllocListStub
	qm, err := d.c.query("/v1/deployment/allocations/"+escape(id), &out, q)
	return out, qm, err
}

// ForJob is a job's latest deployment, nil when it has none.
func (d *Deployments) ForJob(jobID string, q *QueryOptions) (*messages.Deployment, *QueryMeta, error) {
	var out *messages.Deployment
	qm, err := d.c.query("/v1/job/"+escape(jobID)+"/deployment", &out, q)
	return out, qm, err
}

func (d *Deployments) update(action, id string, in any) (*DeploymentUpdateResponse, error) {
	var out DeploymentUpdateResponse
	_, err := d.c.write("POST", "/v1/deployment/"+action+"/"+escape(id), in, &out, nil)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Promote promotes the canaries of groups (all of them when none).
func (d *Deployments) Promote(id string, groups []string) (*DeploymentUpdateResponse, error) {
	return d.update("promote", id, &DeploymentPromoteRequest{DeploymentID: id, All: len(groups) == 0, Groups: groups})
}

// Fail marks a deployment failed (rolling back with auto_revert).
func (d *Deployments) Fail(id string) (*DeploymentUpdateResponse, error) {
	return d.update("fail", id, &DeploymentFailRequest{DeploymentID: id})
}

// Pause pauses (pause) or resumes a deployment.
func (d *Deployments) Pause(id string, pause bool) (*DeploymentUpdateResponse, error) {
	return d.update("pause", id, &DeploymentPauseRequest{DeploymentID: id, Pause: pause})
}

// Unblock unblocks a blocked (multiregion) deployment.
func (d *Deployments) Unblock(id string) (*DeploymentUpdateResponse, error) {
	return d.update("unblock", id, &DeploymentFailRequest{DeploymentID: id})
}
