//go:build linux

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// taskPid is a running task's host pid, from the client's stored handle
// (inside its pid namespace an isolated task is pid 1).
func taskPid(t *testing.T, a *Agent, allocID, task string) int {
	t.Helper()
	sa, err := a.db.Alloc(allocID)
	require.NoError(t, err)
	var h driver.TaskHandle
	require.NoError(t, json.Unmarshal(sa.Handles[task], &h))
	require.Positive(t, h.Pid)
	return h.Pid
}

func isolatedJob(id, user string) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `id -u; cat /proc/1/comm; ls / | tr '\n' ' '; echo
echo "$NOMAD_ALLOC_DIR $NOMAD_TASK_DIR $NOMAD_SECRETS_DIR"
cat /root/troupe-test-marker 2>&1 || echo no-host-root
echo hi > /local/hi; while true; do sleep 0.2; done`}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.User = user
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// TestExecTaskIsolatedEndToEnd runs an exec task through the agent: it
// runs as nobody in its own root, its log is in Nomad's place and read
// by `alloc logs` and `alloc fs`, `alloc exec` lands in its root, and
// after the stop no mount is left under the allocation dir.
func TestExecTaskIsolatedEndToEnd(t *testing.T) {
	requireRoot(t)
	marker := "/root/troupe-test-marker"
	require.NoError(t, os.WriteFile(marker, []byte("host secret\n"), 0o600))
	t.Cleanup(func() { os.Remove(marker) })
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(isolatedJob("iso", ""), nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "iso", "running")
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	hi := filepath.Join(a.AllocDir(), alloc.ID, "t", "local", "hi")
	require.Eventually(t, func() bool { _, err := os.Stat(hi); return err == nil }, 10*time.Second, 10*time.Millisecond)

	logPath := filepath.Join(a.AllocDir(), alloc.ID, "alloc", "logs", "t.stdout.0")
	out, err := os.ReadFile(logPath)
	require.NoError(t, err)
	lines := strings.Split(string(out), "\n")
	require.Equal(t, "65534", lines[0], string(out))
	require.Equal(t, "sh", lines[1])
	require.Contains(t, lines[2], "alloc bin dev etc lib")
	require.Contains(t, lines[2], "local proc sbin secrets tmp usr")
	require.Equal(t, "/alloc /local /secrets", lines[3])
	require.Contains(t, string(out), "no-host-root")
	require.NotContains(t, string(out), "host secret")

	rc, err := c.AllocFS().Cat(alloc, "alloc/logs/t.stdout.0", nil)
	require.NoError(t, err)
	viaFS, err := io.ReadAll(rc)
	rc.Close()
	require.NoError(t, err)
	require.Equal(t, string(out), string(viaFS), "alloc fs reads the log in Nomad's place")
	frames, errs := c.AllocFS().Logs(alloc, false, "t", "stdout", "start", 0, nil, nil)
	select {
	case f := <-frames:
		require.NotNil(t, f)
		require.Contains(t, string(f.Data), "65534")
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("no log frame")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := c.Allocations().Exec(ctx, alloc, "t", false, []string{"sh", "-c", "id -u; pwd; cat /proc/1/comm; cat hi"},
		strings.NewReader(""), &stdout, &stderr, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 0, code, stderr.String())
	require.Equal(t, "65534\n/local\nsh\nhi\n", stdout.String(), "alloc exec sees the task's root")

	_, _, err = c.Jobs().Deregister("iso", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "iso", "complete")
	require.Eventually(t, func() bool {
		mounts, err := os.ReadFile("/proc/self/mountinfo")
		return err == nil && !strings.Contains(string(mounts), filepath.Join(a.AllocDir(), alloc.ID))
	}, 10*time.Second, 10*time.Millisecond, "no mount is left under the allocation dir")
}

// TestExecTaskUserDenylist: Nomad's default denylist refuses root; an
// empty denylist lets a task run as root.
func TestExecTaskUserDenylist(t *testing.T) {
	requireRoot(t)
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(isolatedJob("root", "root"), nil)
	require.NoError(t, err)
	stub := waitAllocs(t, c, "root", "the task never failed", func(s []*nomad.AllocationListStub) bool {
		return len(s) > 0 && s[0].TaskStates["t"] != nil && s[0].TaskStates["t"].Failed ||
			len(s) > 0 && s[0].ClientStatus == "failed"
	})[0]
	full, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	var msgs []string
	for _, ev := range full.TaskStates["t"].Events {
		msgs = append(msgs, ev.DisplayMessage+ev.DriverError)
	}
	require.Contains(t, strings.Join(msgs, "\n"), "user.denylist")

	cfg := testConfig(t, t.TempDir())
	cfg.UserDenylist = []string{}
	b := startAgent(t, cfg)
	defer b.Shutdown()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(isolatedJob("root", "root"), nil)
	require.NoError(t, err)
	stub = waitAllocStatus(t, c, "root", "running")
	logPath := filepath.Join(b.AllocDir(), stub.ID, "alloc", "logs", "t.stdout.0")
	require.Eventually(t, func() bool {
		out, _ := os.ReadFile(logPath)
		return strings.HasPrefix(string(out), "0\n")
	}, 10*time.Second, 10*time.Millisecond, "runs as root when the denylist allows it")
}
