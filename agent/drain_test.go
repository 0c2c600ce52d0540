package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// TestDrainMigratesRespectingMaxParallel drains the agent's node while a
// second (simulated, client-less) node has room: allocations migrate one at
// a time (migrate max_parallel = 1, and the simulated node never runs the
// first replacement), and forcing the drain stops the rest and completes it.
func TestDrainMigratesRespectingMaxParallel(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job, err := c.Jobs().ParseHCL(`job "d" {
  group "g" {
    count = 2
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 0.2; done"]
      }
      kill_timeout = "1s"
      resources {
        cpu    = 50
        memory = 16
      }
    }
  }
}`, true)
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	local := a.Node().GetID()
	require.Eventually(t, func() bool { return countAllocs(a, "d", local, "running") == 2 }, 20*time.Second, 20*time.Millisecond)

	sim := scheduler.SimulatedNodes(1, 7)[0]
	_, _, err = a.Apply(context.Background(), &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{Node: sim}}})
	require.NoError(t, err)

	_, err = c.Nodes().UpdateDrain(local, &api.DrainSpec{}, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return countAllocs(a, "d", sim.GetID(), "pending") == 1 }, 20*time.Second, 20*time.Millisecond)
	n := a.Store().Snapshot().NodeByID(local)
	require.True(t, n.GetDrain())
	require.Equal(t, "ineligible", n.GetSchedulingEligibility())
	// max_parallel = 1: the second allocation waits while the first
	// replacement is not running.
	require.Never(t, func() bool { return countAllocs(a, "d", sim.GetID(), "") > 1 }, 1500*time.Millisecond, 50*time.Millisecond)
	require.Equal(t, 1, countAllocs(a, "d", local, "running"))

	_, err = c.Nodes().UpdateDrain(local, &api.DrainSpec{Deadline: -1}, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n := a.Store().Snapshot().NodeByID(local)
		return !n.GetDrain() && countAllocs(a, "d", local, "running") == 0
	}, 20*time.Second, 20*time.Millisecond, "the forced drain never completed")
	require.Equal(t, "ineligible", a.Store().Snapshot().NodeByID(local).GetSchedulingEligibility())
}

// countAllocs counts a job's allocations on a node with a client status
// ("" = any) that the scheduler still wants.
func countAllocs(a *Agent, job, nodeID, status string) int {
	n := 0
	for _, al := range a.Store().Snapshot().AllocsByJob("default", job) {
		if al.GetNodeID() == nodeID && al.GetDesiredStatus() == "run" && (status == "" || al.GetClientStatus() == status) {
			n++
		}
	}
	return n
}
