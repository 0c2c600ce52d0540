//go:build linux

package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// Environment variables that turn the test binary into a helper process.
const (
	envExecutor = "TROUPE_TEST_EXECUTOR" // run as the executor
	envAgent    = "TROUPE_TEST_AGENT"    // run as a throwaway agent, see agentMain
)

func TestMain(m *testing.M) {
	if os.Getenv(envExecutor) == "1" {
		os.Exit(ExecutorMain(os.Args[1:]))
	}
	if os.Getenv(envAgent) == "1" {
		os.Exit(agentMain(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// agentMain plays an agent: it starts one task (args: task dir, script,
// handle file), writes the handle, and blocks until it is killed.
func agentMain(args []string) int {
	d := New(Config{ExecutorEnv: []string{envExecutor + "=1"}})
	cfg := shellConfig(args[0], "agent/task", args[1])
	h, err := d.StartTask(context.Background(), cfg)
	if err == nil {
		err = writeJSONAtomic(filepath.Dir(args[2]), args[2], h)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	return 0
}

// newDriver returns a driver that runs this test binary as its executor.
func newDriver(t *testing.T, opts ...func(*Config)) *Driver {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	parent := testCgroupParent(t)
	cfg := Config{
		ExecutorPath: exe,
		ExecutorEnv:  []string{envExecutor + "=1", "GORACE=atexit_sleep_ms=0"},
		Logger:       slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		CgroupParent: parent,
	}
	for _, o := range opts {
		o(&cfg)
	}
	d := New(cfg)
	t.Cleanup(d.Shutdown)
	return d
}

// shellConfig runs script under /bin/sh in dir.
func shellConfig(dir, id, script string) *driver.TaskConfig {
	return &driver.TaskConfig{
		ID: id, AllocID: "alloc", TaskName: filepath.Base(id), TaskDir: dir,
		Config:     map[string]any{"command": "/bin/sh", "args": []any{"-c", script}},
		Env:        map[string]string{"PATH": defaultPath},
		StdoutPath: filepath.Join(dir, "stdout.log"),
		StderrPath: filepath.Join(dir, "stderr.log"),
	}
}

// start starts script and makes sure it is killed, and its executor gone,
// before the test's temp dir is removed.
func start(t *testing.T, d *Driver, script string) (*driver.TaskConfig, *driver.TaskHandle) {
	t.Helper()
	cfg := shellConfig(t.TempDir(), "alloc/"+t.Name(), script)
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	return cfg, h
}

// killTask kills a task that a test left running and waits for its
// executor to finish writing.
func killTask(t *testing.T, h *driver.TaskHandle) {
	var st handleState
	require.NoError(t, json.Unmarshal(h.State, &st))
	if alive(h.Pid, h.StartTicks) {
		_ = syscall.Kill(-h.Pid, syscall.SIGKILL)
	}
	require.Eventually(t, func() bool { return !alive(st.ExecutorPid, st.ExecutorStartTicks) },
		10*time.Second, 10*time.Millisecond, "executor of %s still running", h.TaskID)
}

// result waits for the task's exit result.
func result(t *testing.T, d *Driver, taskID string) *driver.ExitResult {
	t.Helper()
	ch, err := d.WaitTask(context.Background(), taskID)
	require.NoError(t, err)
	return recv(t, ch)
}

// recv reads one result and checks that the channel then closes.
func recv(t *testing.T, ch <-chan *driver.ExitResult) *driver.ExitResult {
	t.Helper()
	timer := time.NewTimer(15 * time.Second)
	defer timer.Stop()
	select {
	case r := <-ch:
		_, open := <-ch
		require.False(t, open, "the wait channel must close after its result")
		return r
	case <-timer.C:
		t.Fatal("no exit result")
		return nil
	}
}

// waitFile waits until path exists and returns its content.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil },
		10*time.Second, 10*time.Millisecond, "%s never appeared", path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
