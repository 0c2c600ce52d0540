package messages

import (
	"encoding/json"
	"fmt"
)

// Deployment statuses (Deployment.Status), as Nomad's API spells them.
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
	DeploymentStatusPending    = "pending"
	DeploymentStatusBlocked    = "blocked"
	DeploymentStatusUnblocking = "unblocking"
)

// Deployment status descriptions, Nomad's texts.
const (
	DeploymentDescRunning              = "Deployment is running"
	DeploymentDescRunningNeedsPromo    = "Deployment is running but requires manual promotion"
	DeploymentDescRunningAutoPromotion = "Deployment is running pending automatic promotion"
	DeploymentDescPaused               = "Deployment is paused"
	DeploymentDescSuccessful           = "Deployment completed successfully"
	DeploymentDescStoppedJob           = "Cancelled because job is stopped"
	DeploymentDescNewerJob             = "Cancelled due to newer version of job"
	DeploymentDescFailedAllocations    = "Failed due to unhealthy allocations"
	DeploymentDescProgressDeadline     = "Failed due to progress deadline"
	DeploymentDescFailedByUser         = "Deployment marked as failed"
	DeploymentDescPending              = "Deployment is pending"
	DeploymentDescBlocked              = "Deployment is complete but waiting for peer region"
)

// Health check kinds of an update block (UpdateStrategy.HealthCheck).
const (
	HealthCheckChecks     = "checks"
	HealthCheckTaskStates = "task_states"
	HealthCheckManual     = "manual"
)

// DeploymentDescRollback is Nomad's description of a failed deployment
// that rolls back to a job version.
func DeploymentDescRollback(base string, version uint64) string {
	return fmt.Sprintf("%s - rolling back to job version %d", base, version)
}

// DeploymentDescRollbackNoop says the stable version is the current spec.
func DeploymentDescRollbackNoop(base string, version uint64) string {
	return fmt.Sprintf("%s - not rolling back to stable job version %d as current job has same specification", base, version)
}

// DeploymentDescNoRollbackTarget says no stable version exists.
func DeploymentDescNoRollbackTarget(base string) string {
	return base + " - no stable job version to auto revert to"
}

// Active reports whether the deployment can still make progress (Nomad's
// Deployment.Active).
func (d *Deployment) Active() bool {
	switch d.GetStatus() {
	case DeploymentStatusRunning, DeploymentStatusPaused, DeploymentStatusBlocked,
		DeploymentStatusUnblocking, DeploymentStatusPending:
		return true
	}
	return false
}

// Rolling reports whether the strategy runs deployments (MaxParallel > 0).
func (u *UpdateStrategy) Rolling() bool { return u.GetMaxParallel() > 0 }

// IsHealthy and IsUnhealthy read the tri-state health.
func (s *AllocDeploymentStatus) IsHealthy() bool { return s != nil && s.Healthy != nil && *s.Healthy }
func (s *AllocDeploymentStatus) IsUnhealthy() bool {
	return s != nil && s.Healthy != nil && !*s.Healthy
}

// HealthSet reports whether the health was decided.
func (s *AllocDeploymentStatus) HealthSet() bool { return s != nil && s.Healthy != nil }

// IsCanary reports whether the allocation is a canary.
func (s *AllocDeploymentStatus) IsCanary() bool { return s != nil && s.Canary }

// UnmarshalJSON reads Timestamp as a time or as unix nanoseconds.
func (s *AllocDeploymentStatus) UnmarshalJSON(b []byte) error {
	type plain AllocDeploymentStatus
	aux := struct {
		*plain
		Timestamp nanoTime
	}{plain: (*plain)(s), Timestamp: nanoTime(s.Timestamp)}
	err := json.Unmarshal(b, &aux)
	s.Timestamp = int64(aux.Timestamp)
	return err
}

// UnmarshalJSON reads RequireProgressBy as a time or as unix nanoseconds.
func (s *DeploymentState) UnmarshalJSON(b []byte) error {
	type plain DeploymentState
	aux := struct {
		*plain
		RequireProgressBy nanoTime
	}{plain: (*plain)(s), RequireProgressBy: nanoTime(s.RequireProgressBy)}
	err := json.Unmarshal(b, &aux)
	s.RequireProgressBy = int64(aux.RequireProgressBy)
	return err
}
