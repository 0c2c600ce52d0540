//go:build linux

package exec

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestExitCodeAndLogs(t *testing.T) {
	d := newDriver(t)
	cfg, h := start(t, d, "echo out; echo err >&2; exit 3")
	require.Equal(t, Name, h.Driver)
	require.Equal(t, cfg.ID, h.TaskID)
	require.Positive(t, h.Pid)
	require.NotZero(t, h.StartTicks)

	r := result(t, d, cfg.ID)
	require.NoError(t, r.Err)
	require.Equal(t, 3, r.ExitCode)
	require.Zero(t, r.Signal)
	require.False(t, r.Successful())
	require.Equal(t, "out\n", waitFile(t, cfg.StdoutPath))
	require.Equal(t, "err\n", waitFile(t, cfg.StderrPath))

	// A second wait gets the same result at once.
	require.Equal(t, 3, result(t, d, cfg.ID).ExitCode)
}

func TestLogsAppend(t *testing.T) {
	d := newDriver(t)
	cfg := shellConfig(t.TempDir(), "alloc/append", "echo run")
	for range 2 {
		_, err := d.StartTask(context.Background(), cfg)
		require.NoError(t, err)
		require.True(t, result(t, d, cfg.ID).Successful())
	}
	require.Equal(t, "run\nrun\n", waitFile(t, cfg.StdoutPath))
}

func TestEnvAndWorkDir(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		wantPath string
	}{
		{name: "given PATH", env: map[string]string{"FOO": "bar baz", "PATH": "/usr/bin:/bin"}, wantPath: "/usr/bin:/bin"},
		{name: "default PATH", env: map[string]string{"FOO": "bar baz"}, wantPath: defaultPath},
	}
	t.Setenv("TROUPE_LEAK", "agent env must not reach tasks")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t)
			dir := t.TempDir()
			cfg := shellConfig(dir, "alloc/env", `printf '%s' "$FOO" > foo; pwd -P > pwd; printf '%s' "$PATH" > path; env > env`)
			cfg.Config["command"] = "sh" // looked up in the task's PATH
			cfg.Env = tt.env
			_, err := d.StartTask(context.Background(), cfg)
			require.NoError(t, err)
			require.True(t, result(t, d, cfg.ID).Successful())

			require.Equal(t, "bar baz", waitFile(t, filepath.Join(dir, "foo")))
			real, err := filepath.EvalSymlinks(dir)
			require.NoError(t, err)
			require.Equal(t, real+"\n", waitFile(t, filepath.Join(dir, "pwd")))
			require.Equal(t, tt.wantPath, waitFile(t, filepath.Join(dir, "path")))
			env := waitFile(t, filepath.Join(dir, "env"))
			require.NotContains(t, env, "TROUPE_LEAK")
			require.NotContains(t, env, envExecutor)
		})
	}
}

func TestStopWithSIGTERM(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, "sleep 1000")
	ch, err := d.WaitTask(context.Background(), cfg.ID)
	require.NoError(t, err)

	began := time.Now()
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, 20*time.Second, ""))
	require.Less(t, time.Since(began), 10*time.Second, "SIGTERM must end it before the timeout")
	r := recv(t, ch)
	require.NoError(t, r.Err)
	require.Equal(t, int(syscall.SIGTERM), r.Signal)
	require.Equal(t, 128+int(syscall.SIGTERM), r.ExitCode)
	// Stopping a stopped task is a no-op.
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, time.Second, "SIGINT"))
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, `trap '' TERM; echo ready > ready; while :; do sleep 0.05; done`)
	waitFile(t, filepath.Join(cfg.TaskDir, "ready"))

	const timeout = 300 * time.Millisecond
	began := time.Now()
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, timeout, "SIGTERM"))
	require.GreaterOrEqual(t, time.Since(began), timeout)
	r := result(t, d, cfg.ID)
	require.NoError(t, r.Err)
	require.Equal(t, int(syscall.SIGKILL), r.Signal, "the task ignored SIGTERM: SIGKILL must have ended it")
	require.Equal(t, 137, r.ExitCode)
}

func TestChildrenDieWithTask(t *testing.T) {
	tests := []struct {
		name   string
		script string
		stop   bool
	}{
		{name: "stopped", script: `sleep 1000 & echo $! > child.pid; wait`, stop: true},
		{name: "main process exits", script: `sleep 1000 & echo $! > child.pid; exit 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t)
			cfg, _ := start(t, d, tt.script)
			raw := strings.TrimSpace(waitFile(t, filepath.Join(cfg.TaskDir, "child.pid")))
			child, err := strconv.Atoi(raw)
			require.NoError(t, err, "child pid %q", raw)
			if tt.stop {
				require.NoError(t, d.StopTask(context.Background(), cfg.ID, 5*time.Second, ""))
			}
			result(t, d, cfg.ID)
			require.Eventually(t, func() bool { return !alive(child, 0) },
				10*time.Second, 10*time.Millisecond, "the task's child %d outlived it", child)
		})
	}
}

func TestSignalTask(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, `trap 'echo got >> sig' USR1; echo ready > ready; while :; do sleep 0.05; done`)
	waitFile(t, filepath.Join(cfg.TaskDir, "ready"))
	require.NoError(t, d.SignalTask(context.Background(), cfg.ID, "SIGUSR1"))
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "sig"))
		return string(data) == "got\n"
	}, 10*time.Second, 10*time.Millisecond)
	require.ErrorIs(t, d.SignalTask(context.Background(), cfg.ID, "SIGNOPE"), driver.ErrUnknownSignal)
	require.ErrorIs(t, d.SignalTask(context.Background(), "alloc/none", "HUP"), driver.ErrTaskNotFound)
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, time.Second, "KILL"))
	require.Equal(t, int(syscall.SIGKILL), result(t, d, cfg.ID).Signal)
}

func TestDestroyTask(t *testing.T) {
	d := newDriver(t)
	ctx := context.Background()
	cfg, h := start(t, d, "sleep 1000")
	require.ErrorIs(t, d.DestroyTask(ctx, cfg.ID, false), driver.ErrTaskRunning)
	require.True(t, alive(h.Pid, h.StartTicks))
	require.NoError(t, d.DestroyTask(ctx, cfg.ID, true))
	require.False(t, alive(h.Pid, h.StartTicks), "force destroy returns once the task is gone")
	_, err := d.WaitTask(ctx, cfg.ID)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
	require.ErrorIs(t, d.DestroyTask(ctx, cfg.ID, true), driver.ErrTaskNotFound)
}

func TestWaitTaskContextEnds(t *testing.T) {
	d := newDriver(t)
	cfg, h := start(t, d, "sleep 1000")
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := d.WaitTask(ctx, cfg.ID)
	require.NoError(t, err)
	cancel()
	r := recv(t, ch)
	require.ErrorIs(t, r.Err, context.Canceled)
	require.True(t, alive(h.Pid, h.StartTicks), "ending a wait leaves the task running")
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(cfg *driver.TaskConfig)
		want   error
	}{
		{"no command", func(c *driver.TaskConfig) { delete(c.Config, "command") }, driver.ErrInvalidConfig},
		{"args not strings", func(c *driver.TaskConfig) { c.Config["args"] = []any{1.0} }, driver.ErrInvalidConfig},
		{"no task dir", func(c *driver.TaskConfig) { c.TaskDir = "" }, driver.ErrInvalidConfig},
		{"command not found", func(c *driver.TaskConfig) { c.Config["command"] = "no-such-command-troupe" }, ErrTaskStart},
		{"missing binary", func(c *driver.TaskConfig) { c.Config["command"] = "/nonexistent/bin" }, ErrTaskStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriver(t)
			cfg := shellConfig(t.TempDir(), "alloc/bad", "exit 0")
			tt.change(cfg)
			_, err := d.StartTask(context.Background(), cfg)
			require.ErrorIs(t, err, tt.want)
			_, err = d.WaitTask(context.Background(), cfg.ID)
			require.ErrorIs(t, err, driver.ErrTaskNotFound, "a failed start leaves no task")
		})
	}
}

func TestStartTwice(t *testing.T) {
	d := newDriver(t)
	cfg, _ := start(t, d, "sleep 1000")
	_, err := d.StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, driver.ErrTaskAlreadyStarted)
}

func TestFingerprint(t *testing.T) {
	fp := newDriver(t).Fingerprint(context.Background())
	require.True(t, fp.Detected)
	require.True(t, fp.Healthy, fp.HealthDescription)
	require.Equal(t, map[string]string{"driver.exec": "1"}, fp.Attributes)

	bad := New(Config{ExecutorPath: "/nonexistent/troupe"})
	defer bad.Shutdown()
	require.False(t, bad.Fingerprint(context.Background()).Healthy)
}

func TestShutdownEndsWaits(t *testing.T) {
	d := newDriver(t)
	cfg, h := start(t, d, "sleep 1000")
	ch, err := d.WaitTask(context.Background(), cfg.ID)
	require.NoError(t, err)
	d.Shutdown()
	require.ErrorIs(t, recv(t, ch).Err, driver.ErrShutdown)
	require.True(t, alive(h.Pid, h.StartTicks), "Shutdown leaves tasks running")
	_, err = d.StartTask(context.Background(), shellConfig(t.TempDir(), "alloc/late", "exit 0"))
	require.ErrorIs(t, err, driver.ErrShutdown)
}

func TestTaskUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a task as another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	d := newDriver(t)
	dir := t.TempDir()
	for _, p := range []string{filepath.Dir(dir), dir} { // TempDir's parent is 0700
		require.NoError(t, os.Chmod(p, 0o777))
	}
	cfg := shellConfig(dir, "alloc/user", "id -u > uid")
	cfg.User = "nobody"
	_, err = d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, result(t, d, cfg.ID).Successful())
	require.Equal(t, nobody.Uid+"\n", waitFile(t, filepath.Join(dir, "uid")))

	cfg = shellConfig(t.TempDir(), "alloc/nouser", "exit 0")
	cfg.User = "no-such-user-troupe"
	_, err = d.StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, ErrTaskStart)
}
