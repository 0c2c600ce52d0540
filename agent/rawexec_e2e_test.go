//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// rawExecJob runs script with sh under the raw_exec driver.
func rawExecJob(id, script string) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", script}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// rawExecAgent starts an agent with raw_exec enabled and Nomad's client
// for it; the agent is shut down when the test ends.
func rawExecAgent(t *testing.T) (*Agent, *nomad.Client) {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.RawExecEnabled = true
	a := startAgent(t, cfg)
	t.Cleanup(func() { _ = a.Shutdown() })
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	return a, c
}

// TestRawExecDisabledNotPlaced: an agent without -raw-exec does not offer
// the driver (no driver.raw_exec, undetected in Drivers), and a raw_exec
// job is not placed: its evaluation says why in Nomad's shape (the node
// filtered for missing drivers) and stays blocked, its allocation queued.
func TestRawExecDisabledNotPlaced(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.NotContains(t, node.Attributes, "driver.raw_exec")
	require.NotNil(t, node.Drivers["raw_exec"])
	require.False(t, node.Drivers["raw_exec"].Detected)

	resp, _, err := c.Jobs().Register(rawExecJob("raw", "sleep 100"), nil)
	require.NoError(t, err)
	var eval *nomad.Evaluation
	require.Eventually(t, func() bool {
		eval, _, err = c.Evaluations().Info(resp.EvalID, nil)
		require.NoError(t, err)
		return eval.Status == "complete"
	}, 20*time.Second, 20*time.Millisecond)
	m := eval.FailedTGAllocs["g"]
	require.NotNil(t, m, "%+v", eval)
	require.Equal(t, 1, m.NodesEvaluated)
	require.Equal(t, 1, m.NodesFiltered)
	require.Equal(t, map[string]int{"missing drivers": 1}, m.ConstraintFiltered)
	require.NotEmpty(t, eval.BlockedEval, "the job waits in a blocked eval for a node that offers raw_exec")
	allocs, _, err := c.Jobs().Allocations("raw", false, nil)
	require.NoError(t, err)
	require.Empty(t, allocs)
	sum, _, err := c.Jobs().Summary("raw", nil)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Summary["g"].Queued, "the summary counts the allocation as queued, as Nomad's")
}

// TestRawExecEndToEnd: with raw_exec enabled a task runs as the agent's
// user (root) on the host's root (it reads a file of the test's temp dir
// and sees host paths in NOMAD_*_DIR), in a troupe cgroup; it outlives an
// agent restart and is re-attached, and on stop a daemon it forked dies.
func TestRawExecEndToEnd(t *testing.T) {
	needCgroups(t)
	host := filepath.Join(t.TempDir(), "host-file")
	require.NoError(t, os.WriteFile(host, []byte("on-the-host\n"), 0o600))
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.RawExecEnabled = true
	a := startAgent(t, cfg)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.Equal(t, "1", node.Attributes["driver.raw_exec"])
	require.True(t, node.Drivers["raw_exec"].Detected && node.Drivers["raw_exec"].Healthy)

	script := `id -u; cat ` + host + `; echo "$NOMAD_TASK_DIR"; grep -c troupe /proc/self/cgroup
(setsid sh -c 'sleep 1003 & echo $! > "$NOMAD_TASK_DIR/daemon"' &); while true; do sleep 0.2; done`
	_, _, err = c.Jobs().Register(rawExecJob("raw", script), nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "raw", "running")
	taskDir := filepath.Join(a.AllocDir(), stub.ID, "t")
	var daemon int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(taskDir, "local", "daemon"))
		if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			return false
		}
		daemon, err = strconv.Atoi(string(b[:len(b)-1]))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	out, err := os.ReadFile(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout.0"))
	require.NoError(t, err)
	lines := strings.Split(string(out), "\n")
	require.GreaterOrEqual(t, len(lines), 4, string(out))
	require.Equal(t, "0", lines[0], "raw_exec runs as the agent's user")
	require.Equal(t, "on-the-host", lines[1], "raw_exec sees the host's root")
	require.Equal(t, filepath.Join(taskDir, "local"), lines[2], "NOMAD_TASK_DIR is a host path")
	require.NotEqual(t, "0", lines[3], "the task is in a troupe cgroup: %s", out)
	self, err := os.ReadFile("/proc/" + strconv.Itoa(daemon) + "/cgroup")
	require.NoError(t, err)
	require.Contains(t, string(self), stub.ID+".t", "the daemon is in the task's cgroup")
	pid := taskPid(t, a, stub.ID, "t")

	crash(t, a)
	require.True(t, alive(pid), "the task outlives the agent")
	b := startAgent(t, testConfig(t, dir)) // the handle is re-attached even with raw_exec disabled
	defer b.Shutdown()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		full, _, err := c.Allocations().Info(stub.ID, nil)
		require.NoError(t, err)
		evs := full.TaskStates["t"].Events
		return full.ClientStatus == "running" && len(evs) > 0 && evs[len(evs)-1].Type == "Reattached"
	}, 20*time.Second, 20*time.Millisecond, "the raw_exec task was never re-attached")
	require.Equal(t, pid, taskPid(t, b, stub.ID, "t"), "re-attached, not started again")

	_, _, err = c.Jobs().Deregister("raw", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "raw", "complete")
	require.Eventually(t, func() bool { return !alive(pid) && !alive(daemon) }, 10*time.Second, 10*time.Millisecond,
		"the task and the daemon it forked die on stop")
}

// TestDevEnablesRawExec: a dev agent offers raw_exec, as Nomad's does;
// otherwise only -raw-exec (RawExecEnabled) does.
func TestDevEnablesRawExec(t *testing.T) {
	require.False(t, DefaultConfig().RawExec())
	require.True(t, (&Config{Dev: true}).RawExec())
	require.True(t, (&Config{RawExecEnabled: true}).RawExec())
}
