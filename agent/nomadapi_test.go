package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// TestNomadClientDrivesAgent uses Nomad's own Go client, unchanged, as an
// independent client of the API: register, wait with blocking queries until
// the allocation runs, read it back, stop the job, see it complete.
func TestNomadClientDrivesAgent(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	job := nomad.NewServiceJob("web", "web", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "echo started $NOMAD_ALLOC_ID; while true; do sleep 0.2; done"}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)

	resp, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	require.NotEmpty(t, resp.EvalID)

	alloc := waitAllocStatus(t, c, "web", "running")
	require.Equal(t, a.Node().GetID(), alloc.NodeID)

	full, _, err := c.Allocations().Info(alloc.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "web", *full.Job.ID)
	require.Equal(t, "running", full.TaskStates["t"].State)
	require.False(t, full.TaskStates["t"].StartedAt.IsZero())
	require.Equal(t, int64(64), full.AllocatedResources.Tasks["t"].Memory.MemoryMB)

	onNode, _, err := c.Nodes().Allocations(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.Len(t, onNode, 1, "whole allocations, as Nomad answers /v1/node/:id/allocations")
	require.Equal(t, alloc.ID, onNode[0].ID)
	require.Equal(t, "web", *onNode[0].Job.ID)
	require.Equal(t, int64(64), onNode[0].AllocatedResources.Tasks["t"].Memory.MemoryMB)
	_, _, err = c.Nodes().Allocations("no-such-node", nil)
	require.ErrorContains(t, err, "node not found")

	stdout := filepath.Join(a.AllocDir(), alloc.ID, "t", "stdout.0") // rotated: stdout.0, stdout.1, ...
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(stdout)
		return strings.Contains(string(b), "started "+alloc.ID)
	}, 10*time.Second, 20*time.Millisecond)

	ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
	require.NoError(t, err)
	require.Equal(t, "complete", ev.Status)

	_, _, err = c.Jobs().Deregister("web", false, nil)
	require.NoError(t, err)
	done := waitAllocStatus(t, c, "web", "complete")
	require.Equal(t, "stop", done.DesiredStatus)
	require.Equal(t, "dead", done.TaskStates["t"].State)
	require.False(t, done.TaskStates["t"].Failed)
}

// waitAllocStatus follows the job's allocations with blocking queries until
// the first one has the client status.
func waitAllocStatus(t *testing.T, c *nomad.Client, jobID, status string) *nomad.AllocationListStub {
	t.Helper()
	var found *nomad.AllocationListStub
	waitAllocs(t, c, jobID, fmt.Sprintf("no allocation reached %q", status), func(allocs []*nomad.AllocationListStub) bool {
		for _, al := range allocs {
			if al.ClientStatus == status {
				found = al
				return true
			}
		}
		return false
	})
	return found
}

// waitAllocs follows the job's allocations with blocking queries until done
// says they are what the test waits for, and returns them; after 30s the
// test fails with failure.
func waitAllocs(t *testing.T, c *nomad.Client, jobID, failure string, done func([]*nomad.AllocationListStub) bool) []*nomad.AllocationListStub {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var index uint64
	for time.Now().Before(deadline) {
		allocs, meta, err := c.Jobs().Allocations(jobID, false, &nomad.QueryOptions{WaitIndex: index, WaitTime: 2 * time.Second})
		require.NoError(t, err)
		index = meta.LastIndex
		if done(allocs) {
			return allocs
		}
	}
	t.Fatalf("job %s: %s", jobID, failure)
	return nil
}
