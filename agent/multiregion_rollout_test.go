package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// fakePeers answers each region's deployment from a table, counting the
// questions; a region in down does not answer.
type fakePeers struct {
	deployments map[string]*messages.Deployment
	down        map[string]bool
	asked       []string
}

func (f *fakePeers) peer(_ context.Context, region string, d *messages.Deployment) (*messages.Deployment, error) {
	f.asked = append(f.asked, region+"/"+d.MultiregionRollout)
	if f.down[region] {
		return nil, errors.New("no path to region " + region)
	}
	return f.deployments[region], nil
}

type fakeJobs map[uint64]*messages.Job

func (f fakeJobs) JobVersion(_, _ string, v uint64) *messages.Job { return f[v] }

func (f fakeJobs) LatestStableVersion(_, _ string, before uint64) *messages.Job {
	var out *messages.Job
	for v, j := range f {
		if v < before && j.Stable && (out == nil || v > out.Version) {
			out = j
		}
	}
	return out
}

// TestMultiregionCommand: west's pending deployment starts (with the
// evaluation that places it) once east's is blocked, not while east
// runs; a region that does not answer holds the step; a job version
// without a multiregion block asks nobody.
func TestMultiregionCommand(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	job := &messages.Job{ID: "web", Namespace: "default", Version: 3, Multiregion: &messages.Multiregion{
		Strategy: &messages.MultiregionStrategy{MaxParallel: 1},
		Regions:  []*messages.MultiregionRegion{{Name: "east"}, {Name: "west"}}}}
	mine := &messages.Deployment{ID: "d-west", Namespace: "default", JobID: "web", JobVersion: 3,
		Status: messages.DeploymentStatusPending, IsMultiregion: true, MultiregionRollout: "r1"}
	east := &messages.Deployment{ID: "d-east", Status: messages.DeploymentStatusRunning}
	peers := &fakePeers{deployments: map[string]*messages.Deployment{"east": east}, down: map[string]bool{}}
	ctx := context.Background()

	cmd, err := multiregionCommand(ctx, fakeJobs{3: job}, peers, "west", mine, now)
	require.NoError(t, err)
	require.Nil(t, cmd, "east still runs")
	require.Equal(t, []string{"east/r1"}, peers.asked, "only the other region, for this rollout")

	east.Status = messages.DeploymentStatusBlocked
	cmd, err = multiregionCommand(ctx, fakeJobs{3: job}, peers, "west", mine, now)
	require.NoError(t, err)
	u := cmd.GetUpdateDeploymentStatus()
	require.Equal(t, messages.DeploymentStatusRunning, u.GetStatus())
	require.Equal(t, "d-west", u.GetDeploymentID())
	require.Equal(t, "d-west", u.GetEval().GetDeploymentID(), "the evaluation places the deployment")
	require.Equal(t, now.UnixNano(), cmd.Time)

	peers.down["east"] = true
	cmd, err = multiregionCommand(ctx, fakeJobs{3: job}, peers, "west", mine, now)
	require.ErrorContains(t, err, "no path to region east")
	require.Nil(t, cmd)

	peers.asked = nil
	cmd, err = multiregionCommand(ctx, fakeJobs{3: &messages.Job{ID: "web", Version: 3}}, peers, "west", mine, now)
	require.NoError(t, err)
	require.Nil(t, cmd)
	require.Empty(t, peers.asked)
}

// TestMultiregionCommandRevertsWithPeer: with fail_all, east's blocked
// deployment fails once west's has, and (its group auto-reverting)
// registers the stable version 2's spec with the failure, evaluated as the
// job's; without auto_revert it only fails.
func TestMultiregionCommandRevertsWithPeer(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	block := &messages.Multiregion{Strategy: &messages.MultiregionStrategy{MaxParallel: 1, OnFailure: "fail_all"},
		Regions: []*messages.MultiregionRegion{{Name: "east"}, {Name: "west"}}}
	version := func(v uint64, stable bool, meta string) *messages.Job {
		return &messages.Job{ID: "web", Namespace: "default", Version: v, Stable: stable, Multiregion: block,
			Meta: map[string]string{"v": meta}, MultiregionRollout: "r" + meta}
	}
	jobs := fakeJobs{1: version(1, true, "1"), 2: version(2, true, "2"), 3: version(3, false, "3")}
	peers := &fakePeers{deployments: map[string]*messages.Deployment{"west": {ID: "d-west", Status: messages.DeploymentStatusFailed}}}
	mine := func(autoRevert bool) *messages.Deployment {
		return &messages.Deployment{ID: "d-east", Namespace: "default", JobID: "web", JobVersion: 3,
			Status: messages.DeploymentStatusBlocked, IsMultiregion: true, MultiregionRollout: "r3",
			TaskGroups: map[string]*messages.DeploymentState{"g": {AutoRevert: autoRevert}}}
	}

	cmd, err := multiregionCommand(context.Background(), jobs, peers, "east", mine(true), now)
	require.NoError(t, err)
	u := cmd.GetUpdateDeploymentStatus()
	require.Equal(t, messages.DeploymentStatusFailed, u.GetStatus())
	require.Equal(t, "Failed because of an error in peer region - rolling back to job version 2", u.GetStatusDescription())
	require.Equal(t, "2", u.GetJob().GetMeta()["v"], "version 2's spec")
	require.Zero(t, u.GetJob().GetVersion(), "registered as a new version")
	require.Empty(t, u.GetJob().GetMultiregionRollout())
	require.Equal(t, "web", u.GetEval().GetJobID())
	require.Empty(t, u.GetEval().GetDeploymentID())

	cmd, err = multiregionCommand(context.Background(), jobs, peers, "east", mine(false), now)
	require.NoError(t, err)
	u = cmd.GetUpdateDeploymentStatus()
	require.Equal(t, "Failed because of an error in peer region", u.GetStatusDescription())
	require.Nil(t, u.GetJob())
	require.Nil(t, u.GetEval())
}
