package agent

import (
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestDeploymentAPIManualHealthPauseFail drives a deployment through
// Nomad's client: health_check = "manual" waits for the operator's
// allocation health, which makes version 0 stable; a new version's
// deployment pauses and resumes; failing it rolls the job back (auto
// revert) to version 0's spec; bad requests are 4xx that change nothing.
func TestDeploymentAPIManualHealthPauseFail(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	manual := func(script string) *nomad.Job {
		j := deployJob("man", 1, script, true)
		j.Update.HealthCheck = ptr("manual")
		return j
	}
	_, _, err = c.Jobs().Register(manual("sleep 1000 # v0"), nil)
	require.NoError(t, err)
	var d0 *nomad.Deployment
	require.Eventually(t, func() bool {
		d, _, err := c.Jobs().LatestDeployment("man", nil)
		if err != nil || d == nil || d.TaskGroups["g"].PlacedAllocs != 1 {
			return false
		}
		d0 = d
		return true
	}, 30*time.Second, 50*time.Millisecond)
	allocs, _, err := c.Deployments().Allocations(d0.ID, nil)
	require.NoError(t, err)
	require.Len(t, allocs, 1)

	_, _, err = c.Deployments().SetAllocHealth(d0.ID, []string{"not-an-alloc"}, nil, nil)
	require.ErrorContains(t, err, "400")
	_, _, err = c.Deployments().Info("no-such-deployment", nil)
	require.ErrorContains(t, err, "404")
	_, _, err = c.Deployments().SetAllocHealth(d0.ID, []string{allocs[0].ID}, nil, nil)
	require.NoError(t, err)
	waitDeployment(t, c, "man", 0, "successful", 30*time.Second)
	j, _, err := c.Jobs().Info("man", nil)
	require.NoError(t, err)
	require.True(t, *j.Stable)

	_, _, err = c.Jobs().Register(manual("sleep 1000 # v1"), nil)
	require.NoError(t, err)
	d1 := waitDeployment(t, c, "man", 1, "running", 30*time.Second)
	_, _, err = c.Deployments().Pause(d1.ID, true, nil)
	require.NoError(t, err)
	d, _, err := c.Deployments().Info(d1.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "paused", d.Status)
	require.Equal(t, "Deployment is paused", d.StatusDescription)
	_, _, err = c.Deployments().Pause(d1.ID, false, nil)
	require.NoError(t, err)
	resp, _, err := c.Deployments().Fail(d1.ID, nil)
	require.NoError(t, err)
	require.NotNil(t, resp.RevertedJobVersion)
	require.EqualValues(t, 0, *resp.RevertedJobVersion)
	d, _, err = c.Deployments().Info(d1.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "failed", d.Status)
	require.Equal(t, "Deployment marked as failed - rolling back to job version 0", d.StatusDescription)
	j, _, err = c.Jobs().Info("man", nil)
	require.NoError(t, err)
	require.EqualValues(t, 2, *j.Version)
	require.Equal(t, []any{"-c", "sleep 1000 # v0"}, j.TaskGroups[0].Tasks[0].Config["args"])

	_, _, err = c.Deployments().PromoteAll(d1.ID, nil)
	require.ErrorContains(t, err, "not active")
	_, _, err = c.Jobs().Stable("man", 1, true, nil)
	require.NoError(t, err)
	versions, _, _, err := c.Jobs().Versions("man", false, nil)
	require.NoError(t, err)
	for _, v := range versions {
		if *v.Version == 1 {
			require.True(t, *v.Stable, "PUT /v1/job/:id/stable marks the version")
		}
	}
	_, _, err = c.Jobs().Stable("man", 9, true, nil)
	require.ErrorContains(t, err, "404")
	all, _, err := c.Deployments().List(nil)
	require.NoError(t, err)
	require.Len(t, all, 2)
}
