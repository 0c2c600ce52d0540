package agent

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/cgroups"
)

// These tests run exec tasks in real cgroups (v1 here and in CI, as
// root) and read what Nomad's Go client reads.

func needCgroups(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	if cgroups.Detect() != cgroups.ModeV1 {
		t.Skip("these tests read cgroup v1 files; this host runs " + cgroups.Detect().String())
	}
	if _, err := osexec.LookPath("perl"); err != nil {
		t.Skip("perl allocates the tasks' memory")
	}
}

// memJob is a batch job whose task holds mib MiB (perl) with memoryMB
// as its limit and no restart.
func memJob(id string, mib, memoryMB int) *nomad.Job {
	job := nomad.NewBatchJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail")}
	tg.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/usr/bin/perl").
		SetConfig("args", []string{"-e", `$x = "a" x (` + itoa(mib) + `*1024*1024); sleep 1000`}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(memoryMB)})
	task.KillTimeout = ptr(time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestExecOOMKilledAsNomadReportsIt: a task over its memory limit is
// killed by the kernel and reported as Nomad does: a Terminated event
// with exit code 137, "OOM Killed" and Details oom_killed=true.
func TestExecOOMKilledAsNomadReportsIt(t *testing.T) {
	needCgroups(t)
	perl, err := osexec.LookPath("perl")
	require.NoError(t, err)
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := memJob("hog", 256, 32)
	job.TaskGroups[0].Tasks[0].Config["command"] = perl
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	alloc := waitAllocStatus(t, c, "hog", "failed")
	full, _, err := c.Allocations().Info(alloc.ID, nil)
	require.NoError(t, err)
	st := full.TaskStates["t"]
	require.True(t, st.Failed)
	var term *nomad.TaskEvent
	for _, ev := range st.Events {
		if ev.Type == "Terminated" {
			term = ev
		}
	}
	require.NotNil(t, term, "events %+v", st.Events)
	require.Equal(t, 137, term.ExitCode)
	require.Equal(t, 9, term.Signal)
	require.Equal(t, "true", term.Details["oom_killed"])
	require.Equal(t, "OOM Killed", term.DisplayMessage)
	var raw struct {
		TaskStates map[string]struct{ OOMKilled bool }
	}
	_, err = c.Raw().Query("/v1/allocation/"+alloc.ID, &raw, nil)
	require.NoError(t, err)
	require.True(t, raw.TaskStates["t"].OOMKilled, "the task state says the OOM killer ended it")
}

// TestExecStatsThroughNomadClient: a task holding 40 MiB shows RSS of at
// least that in Allocations().Stats, per task and summed; its cgroup
// exists while it runs and is gone once the job is stopped.
func TestExecStatsThroughNomadClient(t *testing.T) {
	needCgroups(t)
	perl, err := osexec.LookPath("perl")
	require.NoError(t, err)
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := memJob("held", 40, 128)
	job.TaskGroups[0].Tasks[0].Config["command"] = perl
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "held", "running")
	group := taskCgroupDir(a, "memory", stub.ID, "t")
	require.DirExists(t, group, "the task's cgroup, Nomad's <alloc>.<task>")

	alloc := &nomad.Allocation{ID: stub.ID}
	var u *nomad.AllocResourceUsage
	require.Eventually(t, func() bool {
		u, err = c.Allocations().Stats(alloc, nil)
		require.NoError(t, err)
		tu := u.Tasks["t"]
		return tu != nil && tu.ResourceUsage.MemoryStats.RSS >= 40<<20
	}, 20*time.Second, 50*time.Millisecond, "RSS of a task holding 40 MiB")
	require.GreaterOrEqual(t, u.ResourceUsage.MemoryStats.RSS, uint64(40<<20), "the allocation's sum")
	require.Contains(t, u.Tasks["t"].ResourceUsage.MemoryStats.Measured, "RSS")
	require.Contains(t, u.Tasks["t"].ResourceUsage.CpuStats.Measured, "Percent")
	require.Positive(t, u.Timestamp)

	_, err = c.Allocations().Stats(&nomad.Allocation{ID: "no-such-alloc"}, nil)
	require.Error(t, err)

	_, _, err = c.Jobs().Deregister("held", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "held", "complete")
	require.Eventually(t, func() bool { _, err := os.Stat(group); return os.IsNotExist(err) },
		10*time.Second, 10*time.Millisecond, "the cgroup is removed at teardown")
}

// TestExecCgroupSurvivesRestart: a task that started a daemon (setsid and
// a double fork) keeps its cgroup across an agent restart; the new agent
// re-attaches, reads its usage through it, and on stop the daemon dies
// with the task and the cgroup is removed.
func TestExecCgroupSurvivesRestart(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	a := startAgent(t, testConfig(t, dir))
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := loopJob("daemon")
	job.TaskGroups[0].Tasks[0].Config["args"] = []string{"-c",
		`(setsid sh -c 'sleep 1002 &' &); while true; do sleep 0.2; done`}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "daemon", "running")
	// The task runs in its own pid namespace (its $! is not a host pid):
	// the daemon is found on the host among the cgroup's processes.
	group := taskCgroupDir(a, "memory", stub.ID, "t")
	var daemon int
	require.Eventually(t, func() bool {
		daemon = groupProcess(group, "sleep\x001002\x00")
		return daemon > 0
	}, 10*time.Second, 10*time.Millisecond, "the daemon is in the task's cgroup")

	crash(t, a)
	require.DirExists(t, group, "the cgroup outlives the agent")
	require.True(t, alive(daemon))

	b := startAgent(t, testConfig(t, dir))
	defer b.Shutdown()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		u, err := c.Allocations().Stats(&nomad.Allocation{ID: stub.ID}, nil)
		return err == nil && u.Tasks["t"] != nil && u.Tasks["t"].ResourceUsage.MemoryStats.Usage > 0
	}, 20*time.Second, 50*time.Millisecond, "the re-attached task's usage, from the cgroup it kept")

	_, _, err = c.Jobs().Deregister("daemon", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "daemon", "complete")
	require.Eventually(t, func() bool { return !alive(daemon) }, 10*time.Second, 10*time.Millisecond,
		"the daemon died with the task")
	require.Eventually(t, func() bool { _, err := os.Stat(group); return os.IsNotExist(err) },
		10*time.Second, 10*time.Millisecond, "the cgroup is removed at teardown")
}

// groupProcess is the host pid of the process in the cgroup whose
// /proc/<pid>/cmdline is cmdline, or 0.
func groupProcess(group, cmdline string) int {
	procs, err := os.ReadFile(filepath.Join(group, "cgroup.procs"))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(procs)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && string(b) == cmdline {
			return pid
		}
	}
	return 0
}

// TestExecCPUTicksThroughNomadClient: a busy task's CPU shows in Nomad's
// TotalTicks (its percent of a core times the core's MHz), and the node's
// host stats count the MHz its cores used.
func TestExecCPUTicksThroughNomadClient(t *testing.T) {
	needCgroups(t)
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := loopJob("busy")
	job.TaskGroups[0].Tasks[0].Config["args"] = []string{"-c", "while :; do :; done"}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "busy", "running")
	mhz, err := strconv.ParseFloat(a.Node().GetAttributes()["cpu.frequency"], 64)
	require.NoError(t, err)
	require.Positive(t, mhz)
	var cpu *nomad.CpuStats
	require.Eventually(t, func() bool {
		u, err := c.Allocations().Stats(&nomad.Allocation{ID: stub.ID}, nil)
		require.NoError(t, err)
		cpu = u.ResourceUsage.CpuStats
		return cpu != nil && cpu.Percent > 1
	}, 20*time.Second, 100*time.Millisecond, "a busy loop uses CPU")
	require.InDelta(t, cpu.Percent/100*mhz, cpu.TotalTicks, 0.001, "TotalTicks is the percent of a core in MHz")
	require.Eventually(t, func() bool {
		hs, err := c.Nodes().Stats(a.Node().GetID(), nil)
		require.NoError(t, err)
		return hs.CPUTicksConsumed > 0.01*mhz
	}, 10*time.Second, 100*time.Millisecond, "the host's cores are busy")
}
