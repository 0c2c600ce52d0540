package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// trapJob runs a shell that writes its PID to starts at every start and a
// line to usr1 at every SIGUSR1.
func trapJob(id string) *nomad.Job {
	job := loopJob(id)
	job.TaskGroups[0].Tasks[0].SetConfig("args", []string{"-c",
		`echo $$ >> "$NOMAD_TASK_DIR/starts"; trap 'echo usr1 >> "$NOMAD_TASK_DIR/usr1"' USR1; while true; do sleep 0.2; done`})
	return job
}

// TestNomadClientSignalsAndRestartsAlloc drives alloc signal and alloc
// restart through Nomad's Go client against a real exec task: the signal
// reaches the process, which runs on; a restart starts a new process in
// the same allocation, counted against nothing.
func TestNomadClientSignalsAndRestartsAlloc(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(trapJob("trap"), nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "trap", "running")
	dir := filepath.Join(a.AllocDir(), stub.ID, "t", "local")
	starts := filepath.Join(dir, "starts")
	require.Eventually(t, func() bool { return len(readStarts(t, starts)) == 1 }, 10*time.Second, 10*time.Millisecond)
	pid := taskPid(t, a, stub.ID, "t") // inside its pid namespace the task is pid 1
	al := &nomad.Allocation{ID: stub.ID}

	require.NoError(t, c.Allocations().Signal(al, nil, "t", "SIGUSR1"))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "usr1"))
		return string(b) == "usr1\n"
	}, 10*time.Second, 10*time.Millisecond, "the task never saw SIGUSR1")
	require.True(t, alive(pid), "a signal the task traps leaves it running")
	require.Len(t, readStarts(t, starts), 1)
	waitEvent(t, c, stub.ID, "Signaling")

	for _, bad := range []struct{ task, sig, code string }{
		{"nope", "SIGUSR1", "404"}, {"t", "SIGNOPE", "400"},
	} {
		err := c.Allocations().Signal(al, nil, bad.task, bad.sig)
		require.ErrorContains(t, err, bad.code)
	}
	require.ErrorContains(t, c.Allocations().Signal(&nomad.Allocation{ID: "0000dead-0000-0000-0000-000000000000"}, nil, "t", "SIGUSR1"), "404")
	require.ErrorContains(t, c.Allocations().Restart(al, "nope", nil), "404")

	require.NoError(t, c.Allocations().Restart(al, "t", nil))
	pids := readStarts(t, starts)
	require.Len(t, pids, 2, "the restart answers once the task runs again")
	restarted := taskPid(t, a, stub.ID, "t")
	require.NotEqual(t, pid, restarted)
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond)
	require.True(t, alive(restarted))
	full := waitEvent(t, c, stub.ID, "Started")
	require.Equal(t, "running", full.ClientStatus)
	require.Zero(t, full.TaskStates["t"].Restarts, "an operator's restart is counted against nothing")
	var types []string
	for _, ev := range full.TaskStates["t"].Events {
		types = append(types, ev.Type)
	}
	require.Contains(t, types, "Restart Signaled")

	require.NoError(t, c.Allocations().RestartAllTasks(al, nil))
	require.Len(t, readStarts(t, starts), 3)
	allocs, _, err := c.Jobs().Allocations("trap", false, nil)
	require.NoError(t, err)
	require.Len(t, allocs, 1, "restarted in place: no new allocation")
	require.Equal(t, stub.ID, allocs[0].ID)
}

// waitEvent waits until the allocation's task t has ev as its last event
// and returns the allocation.
func waitEvent(t *testing.T, c *nomad.Client, allocID, ev string) *nomad.Allocation {
	t.Helper()
	var full *nomad.Allocation
	require.Eventually(t, func() bool {
		var err error
		full, _, err = c.Allocations().Info(allocID, nil)
		require.NoError(t, err)
		evs := full.TaskStates["t"].Events
		return len(evs) > 0 && evs[len(evs)-1].Type == ev
	}, 10*time.Second, 10*time.Millisecond, "no %q event", ev)
	return full
}

// TestNomadClientRestartAllTasksRunsFinishedTask: in a batch group, a
// real exec task that exited 0 beside a running one is run again by
// `alloc restart -all-tasks` (Nomad's RestartAllTasks), as is the running
// one; a plain restart runs only the running one. Each task appends a
// line to its own runs file at every start.
func TestNomadClientRestartAllTasksRunsFinishedTask(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := loopJob("mixed")
	job.Type = ptr("batch")
	job.TaskGroups[0].Tasks[0].SetConfig("args", []string{"-c", `echo run >> "$NOMAD_TASK_DIR/runs"; while true; do sleep 0.2; done`})
	once := nomad.NewTask("once", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `echo run >> "$NOMAD_TASK_DIR/runs"`}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	job.TaskGroups[0].AddTask(once)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "mixed", "running")
	runs := func(task string) int {
		b, _ := os.ReadFile(filepath.Join(a.AllocDir(), stub.ID, task, "local", "runs"))
		return len(strings.Fields(string(b)))
	}
	states := func() (string, string) {
		full, _, err := c.Allocations().Info(stub.ID, nil)
		require.NoError(t, err)
		return full.TaskStates["t"].State, full.TaskStates["once"].State
	}
	require.Eventually(t, func() bool {
		loop, done := states()
		return loop == "running" && done == "dead" && runs("t") == 1 && runs("once") == 1
	}, 20*time.Second, 20*time.Millisecond, "once never finished beside the running task")
	al := &nomad.Allocation{ID: stub.ID}

	require.NoError(t, c.Allocations().Restart(al, "", nil))
	require.Eventually(t, func() bool { return runs("t") == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, runs("once"), "a plain restart leaves the finished task alone")

	require.NoError(t, c.Allocations().RestartAllTasks(al, nil))
	require.Eventually(t, func() bool { return runs("t") == 3 && runs("once") == 2 }, 10*time.Second, 10*time.Millisecond,
		"after -all-tasks both ran again: t %d, once %d", runs("t"), runs("once"))
	require.Eventually(t, func() bool {
		loop, done := states()
		return loop == "running" && done == "dead"
	}, 10*time.Second, 10*time.Millisecond)
	full, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "running", full.ClientStatus)
	require.False(t, full.TaskStates["once"].Failed)
	require.Zero(t, full.TaskStates["once"].Restarts, "counted against nothing")
}
