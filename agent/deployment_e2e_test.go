package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// deployJob is a service job of count allocations running script under
// exec, rolled one at a time with task_states health.
func deployJob(id string, count int, script string, autoRevert bool) *nomad.Job {
	j := nomad.NewServiceJob(id, id, "global", 50)
	j.Update = &nomad.UpdateStrategy{MaxParallel: ptr(1), HealthCheck: ptr("task_states"),
		MinHealthyTime: ptr(time.Second), HealthyDeadline: ptr(20 * time.Second),
		ProgressDeadline: ptr(time.Minute), AutoRevert: ptr(autoRevert)}
	tg := nomad.NewTaskGroup("g", count)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", script}).Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)}))
	j.AddTaskGroup(tg)
	return j
}

// latestDeployment waits for the job's deployment of version to reach
// status and returns it.
func waitDeployment(t *testing.T, c *nomad.Client, job string, version uint64, status string, within time.Duration) *nomad.Deployment {
	t.Helper()
	var got *nomad.Deployment
	require.Eventually(t, func() bool {
		ds, _, err := c.Jobs().Deployments(job, false, nil)
		if err != nil {
			return false
		}
		for _, d := range ds {
			if d.JobVersion == version && d.Status == status {
				got = d
				return true
			}
		}
		return false
	}, within, 50*time.Millisecond, "job %s version %d: no %s deployment", job, version, status)
	return got
}

// TestRollingUpdateNeverBelowThreeHealthy: a job of 4 allocations with
// max_parallel = 1 moves to a new version one allocation at a time; while
// it does, at least 3 allocations serve at every poll (an old one not
// stopped, or a new one healthy), and at most 5 run; it ends with 4 of the
// new version, a successful deployment, and the version stable.
func TestRollingUpdateNeverBelowThreeHealthy(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	_, _, err = c.Jobs().Register(deployJob("roll", 4, "sleep 1000 # v0", false), nil)
	require.NoError(t, err)
	d0 := waitDeployment(t, c, "roll", 0, "successful", 60*time.Second)
	require.Equal(t, messages.DeploymentDescSuccessful, d0.StatusDescription)
	require.EqualValues(t, 4, d0.TaskGroups["g"].HealthyAllocs)
	j, _, err := c.Jobs().Info("roll", nil)
	require.NoError(t, err)
	require.True(t, *j.Stable, "a successful deployment makes its version stable")

	resp, _, err := c.Jobs().Register(deployJob("roll", 4, "sleep 1000 # v1", false), nil)
	require.NoError(t, err)
	// Each poll records the allocations' states; the rollout ends with
	// the version's deployment successful.
	minServing, maxRunning, polls := 4, 0, 0
	var done *nomad.Deployment
	require.Eventually(t, func() bool {
		allocs, _, err := c.Jobs().Allocations("roll", true, nil)
		if err != nil {
			return false
		}
		serving, running := 0, 0
		for _, al := range allocs {
			if al.DesiredStatus != "run" || al.ClientStatus != "running" {
				continue
			}
			running++
			if al.JobVersion == 0 || (al.DeploymentStatus != nil && al.DeploymentStatus.Healthy != nil && *al.DeploymentStatus.Healthy) {
				serving++
			}
		}
		polls++
		minServing, maxRunning = min(minServing, serving), max(maxRunning, running)
		ds, _, err := c.Jobs().Deployments("roll", false, nil)
		if err != nil {
			return false
		}
		for _, d := range ds {
			if d.JobVersion == 1 && d.Status == "successful" {
				done = d
			}
		}
		return done != nil
	}, 90*time.Second, 50*time.Millisecond, "the rollout did not finish")
	require.NotNil(t, done, "the rollout did not finish")
	t.Logf("polls %d, fewest serving %d, most running %d", polls, minServing, maxRunning)
	require.GreaterOrEqual(t, minServing, 3, "never fewer than 3 healthy during the rollout")
	require.LessOrEqual(t, maxRunning, 5, "max_parallel = 1: at most one extra allocation")
	require.EqualValues(t, 4, done.TaskGroups["g"].HealthyAllocs)
	require.EqualValues(t, 4, done.TaskGroups["g"].PlacedAllocs)
	ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
	require.NoError(t, err)
	require.Equal(t, done.ID, ev.DeploymentID, "the registration's evaluation names the deployment it started")
	require.Eventually(t, func() bool {
		allocs, _, err := c.Jobs().Allocations("roll", false, nil)
		if err != nil {
			return false
		}
		v1 := 0
		for _, al := range allocs {
			if al.DesiredStatus == "run" {
				if al.JobVersion != 1 {
					return false
				}
				v1++
			}
		}
		return v1 == 4
	}, 30*time.Second, 50*time.Millisecond, "4 allocations of version 1, none of version 0")
	d0, _, err = c.Deployments().Info(d0.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "successful", d0.Status)
}

// TestBadVersionRevertedAutomatically: a version whose task exits 1 fails
// its deployment (its allocation is unhealthy); with auto_revert the job
// goes back to the stable version 0's spec as version 2, and the old
// allocations were never stopped.
func TestBadVersionRevertedAutomatically(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	// The isolated exec task counts as running from when its executor
	// starts, before the shell runs: a race-detector build of the agent
	// (its own init) takes over a second to get there, so min_healthy_time
	// must be well above that for "exit 1" to be unhealthy.
	slow := func(j *nomad.Job) *nomad.Job { j.Update.MinHealthyTime = ptr(5 * time.Second); return j }
	_, _, err = c.Jobs().Register(slow(deployJob("bad", 2, "sleep 1000 # good", true)), nil)
	require.NoError(t, err)
	waitDeployment(t, c, "bad", 0, "successful", 60*time.Second)
	old := map[string]bool{}
	allocs, _, err := c.Jobs().Allocations("bad", false, nil)
	require.NoError(t, err)
	for _, al := range allocs {
		old[al.ID] = true
	}
	require.Len(t, old, 2)

	_, _, err = c.Jobs().Register(slow(deployJob("bad", 2, "exit 1", true)), nil)
	require.NoError(t, err)
	failed := waitDeployment(t, c, "bad", 1, "failed", 60*time.Second)
	require.Equal(t, "Failed due to unhealthy allocations - rolling back to job version 0", failed.StatusDescription)
	require.Eventually(t, func() bool {
		j, _, err := c.Jobs().Info("bad", nil)
		return err == nil && *j.Version == 2 && strings.Contains(fmt.Sprint(j.TaskGroups[0].Tasks[0].Config["args"]), "good")
	}, 30*time.Second, 50*time.Millisecond, "the job should be reverted to version 0's spec as version 2")
	require.Eventually(t, func() bool {
		allocs, _, err := c.Jobs().Allocations("bad", false, nil)
		if err != nil {
			return false
		}
		running := 0
		for _, al := range allocs {
			if old[al.ID] && al.DesiredStatus == "run" && al.ClientStatus == "running" {
				running++
			}
		}
		return running == 2
	}, 30*time.Second, 50*time.Millisecond, "the old allocations keep running: %s", allocSummary(a))
	allocs, _, err = c.Jobs().Allocations("bad", true, nil)
	require.NoError(t, err)
	for _, al := range allocs {
		if old[al.ID] {
			require.Equal(t, "run", al.DesiredStatus, "old allocation %s was stopped", al.ID)
		}
	}
}

func allocSummary(a *Agent) string {
	var b strings.Builder
	for _, al := range a.Store().Snapshot().AllocsByJob("default", "bad") {
		fmt.Fprintf(&b, "\n%s v%d %s/%s %q dep=%s health=%v", al.GetID()[:8], al.GetJobVersion(), al.GetDesiredStatus(),
			al.GetClientStatus(), al.GetDesiredDescription(), al.GetDeploymentID(), al.GetDeploymentStatus())
	}
	return b.String()
}

// TestCanaryPromotedByAPI: canary = 1 places one allocation of the new
// version beside the 3 old ones; nothing else moves while it waits (its
// deployment says it needs promotion), and Nomad's client promoting the
// deployment lets the rollout finish with 3 allocations of the new
// version.
func TestCanaryPromotedByAPI(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	_, _, err = c.Jobs().Register(deployJob("can", 3, "sleep 1000 # v0", false), nil)
	require.NoError(t, err)
	waitDeployment(t, c, "can", 0, "successful", 60*time.Second)
	v1 := deployJob("can", 3, "sleep 1000 # v1", false)
	v1.Update.Canary = ptr(1)
	_, _, err = c.Jobs().Register(v1, nil)
	require.NoError(t, err)

	var d *nomad.Deployment
	require.Eventually(t, func() bool {
		var err error
		d, _, err = c.Jobs().LatestDeployment("can", nil)
		return err == nil && d != nil && d.JobVersion == 1 &&
			d.StatusDescription == messages.DeploymentDescRunningNeedsPromo
	}, 60*time.Second, 50*time.Millisecond, "the canary's deployment should wait for promotion")
	require.Len(t, d.TaskGroups["g"].PlacedCanaries, 1)
	allocs, _, err := c.Deployments().Allocations(d.ID, nil)
	require.NoError(t, err)
	require.Len(t, allocs, 1, "only the canary is placed")
	require.True(t, allocs[0].DeploymentStatus.Canary)
	old := 0
	jobAllocs, _, err := c.Jobs().Allocations("can", false, nil)
	require.NoError(t, err)
	for _, al := range jobAllocs {
		if al.JobVersion == 0 && al.DesiredStatus == "run" {
			old++
		}
	}
	require.Equal(t, 3, old, "the old allocations all run beside the canary")

	_, _, err = c.Deployments().PromoteAll(d.ID, nil)
	require.NoError(t, err)
	done := waitDeployment(t, c, "can", 1, "successful", 60*time.Second)
	require.True(t, done.TaskGroups["g"].Promoted)
	require.Eventually(t, func() bool {
		allocs, _, err := c.Jobs().Allocations("can", false, nil)
		if err != nil {
			return false
		}
		n := 0
		for _, al := range allocs {
			if al.DesiredStatus == "run" {
				if al.JobVersion != 1 {
					return false
				}
				n++
			}
		}
		return n == 3
	}, 30*time.Second, 50*time.Millisecond, "3 allocations of version 1")
	_, _, err = c.Deployments().PromoteAll(done.ID, nil)
	require.ErrorContains(t, err, "not active", "a finished deployment cannot be promoted")
}
