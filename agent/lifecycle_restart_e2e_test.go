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
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)

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
