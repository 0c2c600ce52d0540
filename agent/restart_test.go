package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

func loopJob(id string) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `echo $$ >> "$NOMAD_TASK_DIR/starts"; while true; do sleep 0.2; done`}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func readStarts(t *testing.T, path string) []int {
	t.Helper()
	b, _ := os.ReadFile(path)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestRestartReattaches restarts a (non-dev) agent under a running task:
// the task keeps running, the new agent restores the state from raft and
// the client state file and re-attaches to it instead of starting another,
// and can still stop it.
func TestRestartReattaches(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, testConfig(t, dir))
	nodeID := a.Node().GetID()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(loopJob("loop"), nil)
	require.NoError(t, err)
	alloc := waitAllocStatus(t, c, "loop", "running")
	starts := filepath.Join(a.AllocDir(), alloc.ID, "t", "local", "starts")
	require.Eventually(t, func() bool { return len(readStarts(t, starts)) == 1 }, 10*time.Second, 10*time.Millisecond)
	pid := taskPid(t, a, alloc.ID, "t") // inside its pid namespace the task is pid 1

	crash(t, a)
	require.True(t, alive(pid), "the task must outlive the agent")

	b := startAgent(t, testConfig(t, dir))
	defer b.Shutdown()
	require.Equal(t, nodeID, b.Node().GetID(), "the node keeps its ID")
	require.Eventually(t, func() bool { return b.Store().Snapshot().JobByID("default", "loop") != nil },
		10*time.Second, 10*time.Millisecond, "raft restored the job")
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		tree, err := b.ActorTree(t.Context(), "")
		require.NoError(t, err)
		for _, in := range tree.Actors {
			if in.Path == "client/allocs/"+alloc.ID+"/tasks/t" {
				if in.Phase != "running" {
					t.Logf("task actor phase %q, last %s", in.Phase, in.LastMessage)
				}
				return in.Phase == "running"
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the restored task actor never reached running")
	require.Eventually(t, func() bool {
		full, _, err := c.Allocations().Info(alloc.ID, nil)
		require.NoError(t, err)
		evs := full.TaskStates["t"].Events
		return full.ClientStatus == "running" && evs[len(evs)-1].Type == "Reattached"
	}, 10*time.Second, 10*time.Millisecond, "the server never heard of the re-attach")
	require.Len(t, readStarts(t, starts), 1, "the task must not start twice")
	require.True(t, alive(pid))

	_, _, err = c.Jobs().Deregister("loop", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "loop", "complete")
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond)
}
