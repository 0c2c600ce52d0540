package deployment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestCommand: what the deployment actor (and the multiregion rollout)
// commit for each kind of effect.
func TestCommand(t *testing.T) {
	d := &messages.Deployment{ID: "d", Namespace: "default", JobID: "web", JobVersion: 1}
	v1, rev := job(1, 4), RevertJob(job(0, 4))

	cmd := Command(d, v1, Effects{Status: messages.DeploymentStatusFailed, Description: "x", Revert: rev}, t0)
	u := cmd.GetUpdateDeploymentStatus()
	require.Equal(t, t0.UnixNano(), cmd.Time)
	require.Equal(t, "d", u.GetDeploymentID())
	require.Equal(t, messages.DeploymentStatusFailed, u.GetStatus())
	require.Same(t, rev, u.GetJob(), "the revert registers the stable spec with the failure")
	require.Equal(t, "web", u.GetEval().GetJobID())
	require.Empty(t, u.GetEval().GetDeploymentID(), "the revert's evaluation is the job's, not the failed deployment's")

	u = Command(d, v1, Effects{Status: messages.DeploymentStatusRunning, Eval: true}, t0).GetUpdateDeploymentStatus()
	require.Nil(t, u.GetJob())
	require.Equal(t, "d", u.GetEval().GetDeploymentID())

	u = Command(d, v1, Effects{Status: messages.DeploymentStatusFailed}, t0).GetUpdateDeploymentStatus()
	require.Nil(t, u.GetJob())
	require.Nil(t, u.GetEval())

	p := Command(d, v1, Effects{Promote: true}, t0).GetPromoteDeployment()
	require.True(t, p.GetAll())
	require.Equal(t, "d", p.GetEval().GetDeploymentID())

	require.Len(t, Command(d, v1, Effects{Eval: true}, t0).GetUpsertEvals().GetEvals(), 1)
	require.Nil(t, Command(d, v1, Effects{}, t0))
}
