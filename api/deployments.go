package api

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
