package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// deploymentAt stores a running deployment of job web whose group must
// progress within ten minutes of the clock.
func (h *harness) deploymentAt(autoRevert bool) {
	h.t.Helper()
	h.apply(registerJob(testJob("web", "service")))
	j := h.store.Snapshot().JobByID("default", "web")
	h.apply(&messages.Command{Cmd: &messages.Command_UpsertDeployment{UpsertDeployment: &messages.UpsertDeployment{
		Deployment: &messages.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: j.Version,
			JobCreateIndex: j.CreateIndex, Status: messages.DeploymentStatusRunning,
			TaskGroups: map[string]*messages.DeploymentState{"g": {DesiredTotal: 1, AutoRevert: autoRevert,
				ProgressDeadline: int64(10 * time.Minute), RequireProgressBy: h.clock.Now().Add(10 * time.Minute).UnixNano()}}}}}})
}

// failsAtDeadline advances the clock a minute at a time until the
// deployment fails, and checks that it failed for its progress deadline,
// not before it.
func (h *harness) failsAtDeadline(start time.Time) *messages.Deployment {
	h.t.Helper()
	var d *messages.Deployment
	require.Eventually(h.t, func() bool {
		d = h.store.Snapshot().DeploymentByID("d1")
		if d.GetStatus() == messages.DeploymentStatusFailed {
			return true
		}
		h.clock.Advance(time.Minute)
		return false
	}, 5*time.Second, 5*time.Millisecond, "the deployment should fail at its progress deadline")
	require.False(h.t, h.clock.Now().Before(start.Add(10*time.Minute)), "failed before its deadline")
	return d
}

// TestDeploymentActorFailsAtProgressDeadline: the leader starts an actor
// for a new deployment, which fails it on the injected clock when no
// allocation became healthy by the progress deadline.
func TestDeploymentActorFailsAtProgressDeadline(t *testing.T) {
	h := newHarness(t, nil)
	h.lead()
	start := h.clock.Now()
	h.deploymentAt(false)
	d := h.failsAtDeadline(start)
	require.Equal(t, messages.DeploymentDescProgressDeadline, d.StatusDescription)
}

// TestDeploymentActorRebuiltOnLeadership: a deployment stored before this
// server leads gets its actor when it does, and auto_revert without a
// stable version says so.
func TestDeploymentActorRebuiltOnLeadership(t *testing.T) {
	h := newHarness(t, nil)
	start := h.clock.Now()
	h.deploymentAt(true)
	h.lead()
	d := h.failsAtDeadline(start)
	require.Equal(t, "Failed due to progress deadline - no stable job version to auto revert to", d.StatusDescription)
}
