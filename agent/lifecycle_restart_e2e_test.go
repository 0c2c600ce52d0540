//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestRestartAllTasksRerunsPrestart: Nomad's alloc restart -all-tasks
// runs the prestart task again, to its end, before the main task starts
// again (the order file's real process times say so), and the poststart
// task after it; a plain restart restarts only the running main task and
// leaves the finished prestart task alone.
func TestRestartAllTasksRerunsPrestart(t *testing.T) {
	a, c := rawExecAgent(t)
	job := lifecycleJob("rerun", "batch",
		lifecycleTask("init", "sleep 0.3", "prestart", false, false),
		lifecycleTask("main", "", "", false, true),
		lifecycleTask("after", "", "poststart", false, false))
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "rerun", "running")
	order := filepath.Join(a.AllocDir(), stub.ID, "alloc", "order")
	content := func() string { b, _ := os.ReadFile(order); return string(b) }
	count := func(what string) int { return strings.Count(content(), what) }
	require.Eventually(t, func() bool { return count("after end") == 1 }, 20*time.Second, 20*time.Millisecond)
	// The poststart task wrote its end; wait until the agent saw it exit
	// too, or a restart of the running tasks would still restart it.
	var alloc *nomad.Allocation
	require.Eventually(t, func() bool {
		alloc, _, err = c.Allocations().Info(stub.ID, nil)
		return err == nil && alloc.TaskStates["after"] != nil && alloc.TaskStates["after"].State == "dead"
	}, 20*time.Second, 20*time.Millisecond, "the poststart task is dead")

	require.NoError(t, c.Allocations().Restart(alloc, "", nil))
	require.Eventually(t, func() bool { return count("main start") == 2 }, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, count("init start"), "a plain restart does not rerun the prestart task")
	require.Equal(t, 1, count("after start"), "nor the finished poststart task")

	seen := len(strings.Split(strings.TrimSpace(content()), "\n"))
	require.NoError(t, c.Allocations().RestartAllTasks(alloc, nil))
	require.Eventually(t, func() bool { return count("after end") == 2 && count("main start") == 3 }, 20*time.Second, 20*time.Millisecond,
		"order: %s", content())
	// The lines the restart of all tasks wrote, in the order their real
	// processes wrote them.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(content()), "\n")[seen:] {
		f := strings.Fields(l)
		lines = append(lines, f[0]+" "+f[1])
	}
	at := func(line string) int {
		t.Helper()
		i := slices.Index(lines, line)
		require.GreaterOrEqual(t, i, 0, "no %q in %v", line, lines)
		return i
	}
	require.Less(t, at("main end"), at("main start"), "%v", lines)
	require.Less(t, at("init start"), at("init end"), "%v", lines)
	require.Less(t, at("init end"), at("main start"), "the prestart task ran to its end before the main task: %v", lines)
	require.Less(t, at("main start"), at("after start"), "the poststart task after the main one: %v", lines)
	require.Equal(t, 2, count("init start"), "the prestart task ran again, once")

	var full *nomad.Allocation
	require.Eventually(t, func() bool {
		full, _, err = c.Allocations().Info(stub.ID, nil)
		return err == nil && full.ClientStatus == "running" && full.TaskStates["after"].State == "dead"
	}, 20*time.Second, 20*time.Millisecond, "the allocation runs on")
	for name, st := range full.TaskStates {
		require.False(t, st.Failed, name)
		require.Zero(t, st.Restarts, "%s: an operator's restart counts against nothing", name)
	}
}

// TestRestartAllTasksWaitsForPrestartSidecar: on a restart of all tasks
// a prestart sidecar is restarted too, and the main task starts again
// only once the sidecar runs again. The sidecar takes half a second to
// stop (its TERM trap sleeps), so a main task that took the sidecar's
// state from before the restart for "up" would start before the sidecar
// even ended.
func TestRestartAllTasksWaitsForPrestartSidecar(t *testing.T) {
	a, c := rawExecAgent(t)
	side := lifecycleTask("side", "", "prestart", true, true)
	side.Config["args"] = []string{"-c", `trap 'sleep 0.5; ` + strings.ReplaceAll(orderLine("side", "end"), `'`, `'\''`) +
		`; exit 0' TERM; ` + orderLine("side", "start") + `; while true; do sleep 0.05; done`}
	job := lifecycleJob("sidecar-rerun", "service", side, lifecycleTask("main", "", "", false, true))
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "sidecar-rerun", "running")
	order := filepath.Join(a.AllocDir(), stub.ID, "alloc", "order")
	content := func() string { b, _ := os.ReadFile(order); return string(b) }
	require.Eventually(t, func() bool { return strings.Count(content(), "main start") == 1 }, 20*time.Second, 20*time.Millisecond)
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)

	require.NoError(t, c.Allocations().RestartAllTasks(alloc, nil))
	require.Eventually(t, func() bool {
		return strings.Count(content(), "main start") == 2 && strings.Count(content(), "side start") == 2
	}, 20*time.Second, 20*time.Millisecond, "both tasks start again: %s", content())
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(content()), "\n") {
		f := strings.Fields(l)
		lines = append(lines, f[0]+" "+f[1])
	}
	sideEnd, sideStart2, mainStart2 := slices.Index(lines, "side end"), lastIndex(lines, "side start"), lastIndex(lines, "main start")
	require.GreaterOrEqual(t, sideEnd, 0, "the sidecar was stopped: %v", lines)
	require.Greater(t, sideStart2, sideEnd, "and started again: %v", lines)
	require.Greater(t, mainStart2, sideEnd, "the main task started again after the sidecar stopped: %v", lines)
	require.Equal(t, 1, strings.Count(content(), "side end"), "the sidecar was restarted once: %v", lines)
}

// lastIndex is the index of the last line equal to s, -1 for none.
func lastIndex(lines []string, s string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == s {
			return i
		}
	}
	return -1
}
