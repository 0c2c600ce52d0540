package e2e

import (
	"fmt"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// rollJob is a service job of 3 allocations rolled one at a time.
func rollJob(version string) *nomad.Job {
	j := nomad.NewServiceJob("roll", "roll", "global", 50)
	j.Datacenters = []string{"dc1"}
	j.Update = &nomad.UpdateStrategy{MaxParallel: ptrTo(1), HealthCheck: ptrTo("task_states"),
		MinHealthyTime: ptrTo(2 * time.Second), HealthyDeadline: ptrTo(30 * time.Second),
		ProgressDeadline: ptrTo(2 * time.Minute)}
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "while true; do sleep 1; done # " + version}).
		Require(&nomad.Resources{CPU: ptrTo(20), MemoryMB: ptrTo(16)})
	j.AddTaskGroup(nomad.NewTaskGroup("g", 3).AddTask(task))
	return j
}

func ptrTo[T any](v T) *T { return &v }

// TestClusterDeploymentSurvivesLeaderKill: the leader is killed in the
// middle of a rolling update; the new leader rebuilds the deployment's
// actor from raft and the rollout completes with exactly 3 allocations of
// the new version, none extra and none missing.
func TestClusterDeploymentSurvivesLeaderKill(t *testing.T) {
	tc := startCluster(t, 1)
	c := nomadClient(t, tc.leader(t))
	_, _, err := c.Jobs().Register(rollJob("v0"), nil)
	require.NoError(t, err)
	deploymentOf := func(c *nomad.Client, version uint64) (*nomad.Deployment, string) {
		ds, _, err := c.Jobs().Deployments("roll", false, nil)
		if err != nil {
			return nil, err.Error()
		}
		for _, d := range ds {
			if d.JobVersion == version {
				return d, fmt.Sprintf("%s %s healthy %d", d.Status, d.StatusDescription, d.TaskGroups["g"].HealthyAllocs)
			}
		}
		return nil, "no deployment yet"
	}
	tc.eventually(t, 90*time.Second, "version 0's deployment succeeds", func() (bool, string) {
		d, why := deploymentOf(c, 0)
		return d != nil && d.Status == "successful", why
	})
	_, _, err = c.Jobs().Register(rollJob("v1"), nil)
	require.NoError(t, err)
	tc.eventually(t, 60*time.Second, "version 1's deployment is under way", func() (bool, string) {
		d, why := deploymentOf(c, 1)
		return d != nil && d.Status == "running" && d.TaskGroups["g"].HealthyAllocs >= 1, why
	})
	old := tc.leader(t)
	old.Kill(t)
	var next *nomad.Client
	tc.eventually(t, 30*time.Second, "a new leader", func() (bool, string) {
		for _, s := range tc.liveServers() {
			if s != old {
				next = nomadClient(t, s)
				if l, err := next.Status().Leader(); err == nil && l != "" {
					return true, ""
				}
			}
		}
		return false, "no leader"
	})
	tc.eventually(t, 2*time.Minute, "version 1's deployment succeeds under the new leader", func() (bool, string) {
		d, why := deploymentOf(next, 1)
		return d != nil && d.Status == "successful", why
	})
	tc.eventually(t, 60*time.Second, "exactly 3 allocations of version 1 run", func() (bool, string) {
		allocs, _, err := next.Jobs().Allocations("roll", true, nil)
		if err != nil {
			return false, err.Error()
		}
		v1, live := 0, 0
		for _, a := range allocs {
			if a.JobVersion == 1 {
				v1++
			}
			if a.DesiredStatus == "run" {
				live++
			}
		}
		return v1 == 3 && live == 3, fmt.Sprintf("%d of version 1 placed, %d wanted running", v1, live)
	})
}
