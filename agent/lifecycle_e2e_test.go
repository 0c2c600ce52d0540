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

// orderLine appends "NAME WHAT <ns timestamp>" to the allocation's shared
// order file.
func orderLine(name, what string) string {
	return `echo "` + name + ` ` + what + ` $(date +%s%N)" >> "$NOMAD_ALLOC_DIR/order"`
}

// lifecycleTask is a raw_exec task that records its start, runs body and
// records its end; a sidecar (forever) records its end when stopped.
func lifecycleTask(name, body string, hook string, sidecar, forever bool) *nomad.Task {
	if body == "" {
		body = "true"
	}
	script := orderLine(name, "start") + "; " + body + "; " + orderLine(name, "end")
	if forever {
		script = `trap '` + strings.ReplaceAll(orderLine(name, "end"), `'`, `'\''`) + `; exit 0' TERM; ` +
			orderLine(name, "start") + `; while true; do sleep 0.05; done`
	}
	task := nomad.NewTask(name, "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", script}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(5 * time.Second)
	if hook != "" {
		task.Lifecycle = &nomad.TaskLifecycle{Hook: hook, Sidecar: sidecar}
	}
	return task
}

func lifecycleJob(id, typ string, tasks ...*nomad.Task) *nomad.Job {
	job := nomad.NewBatchJob(id, id, "global", 50)
	if typ == "service" {
		job = nomad.NewServiceJob(id, id, "global", 50)
	}
	tg := nomad.NewTaskGroup("g", 1)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail"),
		Interval: ptr(time.Hour), Delay: ptr(time.Second)}
	tg.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)}
	for _, t := range tasks {
		tg.AddTask(t)
	}
	job.AddTaskGroup(tg)
	return job
}

// readOrder reads the order file: each task's start and end times.
func readOrder(t *testing.T, path string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 3, "order line %q", line)
		ns, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		out[f[0]+" "+f[1]] = ns
	}
	return out
}

// before asserts that event a happened before event b in the order file.
func before(t *testing.T, times map[string]int64, a, b string) {
	t.Helper()
	require.Contains(t, times, a)
	require.Contains(t, times, b)
	require.Less(t, times[a], times[b], "%s must come before %s", a, b)
}

// TestLifecycleEndToEnd runs allocations with lifecycle tasks through the
// agent with Nomad's client and real raw_exec processes, and checks the
// order from the times the processes wrote: prestart finishes before the
// main task starts, a prestart sidecar runs beside it and is stopped after
// it, poststart starts after it, poststop runs after everything else; a
// failed prestart task fails the allocation without starting the main
// task; a leader's exit stops the others; a stopped job runs its poststop
// task after its main task stopped.
func TestLifecycleEndToEnd(t *testing.T) {
	a, c := rawExecAgent(t)
	orderOf := func(id string) string { return filepath.Join(a.AllocDir(), id, "alloc", "order") }

	batch := lifecycleJob("phases", "batch",
		lifecycleTask("init", "sleep 0.3", "prestart", false, false),
		lifecycleTask("proxy", "", "prestart", true, true),
		lifecycleTask("main", "sleep 1", "", false, false),
		lifecycleTask("after", "sleep 0.1", "poststart", false, false),
		lifecycleTask("clean", "sleep 0.1", "poststop", false, false))
	failing := lifecycleJob("badinit", "batch",
		lifecycleTask("init", "exit 3", "prestart", false, false),
		lifecycleTask("main", "", "", false, false),
		lifecycleTask("clean", "", "poststop", false, false))
	lead := lifecycleTask("lead", "sleep 0.5", "", false, false)
	lead.Leader = true
	leader := lifecycleJob("leader", "batch", lead, lifecycleTask("other", "", "", false, true))
	service := lifecycleJob("stopped", "service",
		lifecycleTask("main", "", "", false, true),
		lifecycleTask("clean", "", "poststop", false, false))
	for _, j := range []*nomad.Job{batch, failing, leader, service} {
		_, _, err := c.Jobs().Register(j, nil)
		require.NoError(t, err, *j.ID)
	}

	t.Run("job read back", func(t *testing.T) {
		job, _, err := c.Jobs().Info("phases", nil)
		require.NoError(t, err)
		byName := map[string]*nomad.TaskLifecycle{}
		for _, task := range job.TaskGroups[0].Tasks {
			byName[task.Name] = task.Lifecycle
		}
		require.Equal(t, &nomad.TaskLifecycle{Hook: "prestart", Sidecar: true}, byName["proxy"])
		require.Equal(t, &nomad.TaskLifecycle{Hook: "poststop"}, byName["clean"])
		require.Nil(t, byName["main"])
	})

	t.Run("invalid hook is a 400", func(t *testing.T) {
		bad := lifecycleJob("badhook", "batch", lifecycleTask("x", "", "prerun", false, false),
			lifecycleTask("main", "", "", false, false))
		_, _, err := c.Jobs().Register(bad, nil)
		require.ErrorContains(t, err, "400")
		require.ErrorContains(t, err, `invalid hook "prerun"`)
		noMain := lifecycleJob("nomain", "batch", lifecycleTask("x", "", "prestart", false, false))
		_, _, err = c.Jobs().Register(noMain, nil)
		require.ErrorContains(t, err, "missing main task")
		_, _, err = c.Jobs().Info("badhook", nil)
		require.Error(t, err, "nothing was registered")
	})

	t.Run("batch phases", func(t *testing.T) {
		stub := waitAllocStatus(t, c, "phases", "complete")
		times := readOrder(t, orderOf(stub.ID))
		before(t, times, "init end", "main start")
		before(t, times, "proxy start", "main start")
		before(t, times, "main end", "proxy end")
		before(t, times, "main start", "after start")
		before(t, times, "main end", "clean start")
		before(t, times, "proxy end", "clean start")
		before(t, times, "after end", "clean start")
		full, _, err := c.Allocations().Info(stub.ID, nil)
		require.NoError(t, err)
		for _, task := range []string{"init", "proxy", "main", "after", "clean"} {
			st := full.TaskStates[task]
			require.NotNil(t, st, task)
			require.Equal(t, "dead", st.State, task)
			require.False(t, st.Failed, task)
		}
		require.Equal(t, "Main Tasks Dead", lastEvent(full.TaskStates["proxy"], "Killing"), "the sidecar is stopped because the main tasks are dead")
	})

	t.Run("failed prestart", func(t *testing.T) {
		stub := waitAllocStatus(t, c, "badinit", "failed")
		full, _, err := c.Allocations().Info(stub.ID, nil)
		require.NoError(t, err)
		require.True(t, full.TaskStates["init"].Failed)
		require.Equal(t, "dead", full.TaskStates["main"].State)
		require.Empty(t, full.TaskStates["main"].StartedAt, "the main task never starts")
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(orderOf(stub.ID))
			return err == nil && strings.Contains(string(b), "clean end")
		}, 20*time.Second, 20*time.Millisecond, "the poststop task runs")
		times := readOrder(t, orderOf(stub.ID))
		require.NotContains(t, times, "main start")
		require.Equal(t, "Sibling Task Failed: init", lastEvent(full.TaskStates["main"], "Killed"))
		before(t, times, "init start", "clean start")
	})

	t.Run("leader", func(t *testing.T) {
		stub := waitAllocStatus(t, c, "leader", "complete")
		times := readOrder(t, orderOf(stub.ID))
		before(t, times, "lead end", "other end")
		full, _, err := c.Allocations().Info(stub.ID, nil)
		require.NoError(t, err)
		require.Equal(t, "dead", full.TaskStates["other"].State)
		require.False(t, full.TaskStates["other"].Failed)
	})

	t.Run("job stop runs poststop", func(t *testing.T) {
		stub := waitAllocStatus(t, c, "stopped", "running")
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(orderOf(stub.ID))
			return err == nil && strings.Contains(string(b), "main start")
		}, 20*time.Second, 20*time.Millisecond)
		_, _, err := c.Jobs().Deregister("stopped", false, nil)
		require.NoError(t, err)
		waitAllocStatus(t, c, "stopped", "complete")
		times := readOrder(t, orderOf(stub.ID))
		before(t, times, "main end", "clean start")
		before(t, times, "clean start", "clean end")
	})
}

// lastEvent returns the message of the task's last event of type typ.
func lastEvent(st *nomad.TaskState, typ string) string {
	msg := "(no " + typ + " event)"
	for _, ev := range st.Events {
		if ev.Type == typ {
			msg = ev.KillReason
			if msg == "" {
				msg = ev.Message
			}
		}
	}
	return msg
}
