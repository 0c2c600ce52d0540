//go:build linux

package qemu

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// idleVM is a task whose qemu runs no guest at all (-S: the CPU never
// starts), so it cannot react to the power button: the cheapest real VM.
func idleVM(t *testing.T, graceful bool) *driver.TaskConfig {
	t.Helper()
	taskDir := filepath.Join(t.TempDir(), "a1", "idle")
	require.NoError(t, os.MkdirAll(taskDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(taskDir, "disk.img"), make([]byte, 64<<10), 0o644))
	return &driver.TaskConfig{ID: "a1/idle", AllocID: "a1", TaskName: "idle", TaskDir: taskDir,
		StdoutPath: filepath.Join(taskDir, "stdout"), StderrPath: filepath.Join(taskDir, "stderr"), MemoryMB: 32,
		Config: map[string]any{"image_path": "disk.img", "graceful_shutdown": graceful, "args": []any{"-S", "-nodefaults"}}}
}

// TestStopGracefulGuestIgnoresPowerdown: a guest that does not handle
// system_powerdown is killed once kill_timeout passes.
func TestStopGracefulGuestIgnoresPowerdown(t *testing.T) {
	needVM(t)
	d := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t)})
	defer d.Shutdown()
	ctx := context.Background()
	cfg := idleVM(t, true)
	h, err := d.StartTask(ctx, cfg)
	require.NoError(t, err)
	ch, err := d.WaitTask(ctx, cfg.ID)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, d.StopTask(ctx, cfg.ID, 500*time.Millisecond, ""))
	require.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "it waited for the guest")
	res := <-ch
	require.Equal(t, 137, res.ExitCode, "killed: %+v", res)
	require.Equal(t, 9, res.Signal)
	require.False(t, alive(h.Pid, h.StartTicks))
	require.NoError(t, d.DestroyTask(ctx, cfg.ID, false))
	require.NoDirExists(t, filepath.Join(cfg.TaskDir, stateDirName))
}

// TestStopSignalsQemu: without graceful_shutdown stop sends the kill
// signal to qemu, which exits on SIGTERM at once.
func TestStopSignalsQemu(t *testing.T) {
	needVM(t)
	d := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t)})
	defer d.Shutdown()
	ctx := context.Background()
	cfg := idleVM(t, false)
	h, err := d.StartTask(ctx, cfg)
	require.NoError(t, err)
	_, err = d.StartTask(ctx, cfg)
	require.ErrorIs(t, err, driver.ErrTaskAlreadyStarted)
	ch, err := d.WaitTask(ctx, cfg.ID)
	require.NoError(t, err)
	require.NoError(t, d.StopTask(ctx, cfg.ID, time.Minute, ""))
	res := <-ch
	require.NoError(t, res.Err)
	require.Equal(t, 0, res.ExitCode, "qemu exits 0 on SIGTERM")
	require.False(t, alive(h.Pid, h.StartTicks))
	stderr, _ := os.ReadFile(cfg.StderrPath)
	require.Contains(t, string(stderr), "terminating on signal 15")
}

// TestRecoverAfterExitAndGone: a VM that ended while no driver watched
// recovers with its status from the exit file; a destroyed one is gone.
func TestRecoverAfterExitAndGone(t *testing.T) {
	needVM(t)
	ctx := context.Background()
	d1 := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t)})
	cfg := idleVM(t, false)
	h, err := d1.StartTask(ctx, cfg)
	require.NoError(t, err)
	d1.Shutdown()
	st, err := decodeHandle(h)
	require.NoError(t, err)
	require.NoError(t, processes{d1}.Kill(ctx, &task{ID: h.TaskID, Handle: *h, Data: st}))
	require.Eventually(t, func() bool { return fileExists(filepath.Join(st.StateDir, exitFileName)) },
		10*time.Second, 20*time.Millisecond, "the shim recorded the exit")

	d2 := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t)})
	defer d2.Shutdown()
	require.NoError(t, d2.RecoverTask(ctx, h))
	ch, err := d2.WaitTask(ctx, h.TaskID)
	require.NoError(t, err)
	res := <-ch
	require.Equal(t, 137, res.ExitCode)
	require.NoError(t, d2.DestroyTask(ctx, h.TaskID, false))

	d3 := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t)})
	defer d3.Shutdown()
	require.ErrorIs(t, d3.RecoverTask(ctx, h), driver.ErrTaskNotFound)
	bad := *h
	bad.Driver = "exec"
	require.ErrorIs(t, d3.RecoverTask(ctx, &bad), driver.ErrInvalidHandle)
}

// TestStartErrors: problems a start finds are errors naming them, and
// leave no process behind.
func TestStartErrors(t *testing.T) {
	needVM(t)
	d := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t)})
	defer d.Shutdown()
	ctx := context.Background()

	cfg := idleVM(t, false)
	cfg.Config["image_path"] = "missing.img"
	_, err := d.StartTask(ctx, cfg)
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
	require.ErrorContains(t, err, `image_path "missing.img" is not a file`)

	cfg = idleVM(t, false)
	cfg.Config["args"] = []any{"-no-such-option"}
	_, err = d.StartTask(ctx, cfg)
	require.ErrorContains(t, err, "qemu exited at start")
	require.ErrorContains(t, err, "-no-such-option", "qemu's own message is in the error")

	cfg = idleVM(t, false)
	cfg.Config["port_map"] = map[string]any{"http": float64(80)}
	_, err = d.StartTask(ctx, cfg)
	require.ErrorContains(t, err, `no port labelled "http"`)

	groups, err := cgroupManager(t).Groups()
	require.NoError(t, err)
	require.Empty(t, groups, "a VM that did not start leaves no cgroup")
}

func TestFingerprintWithoutQemu(t *testing.T) {
	fp := New(Config{Binary: filepath.Join(t.TempDir(), "no-qemu")}).Fingerprint(context.Background())
	require.False(t, fp.Detected)
	require.Contains(t, fp.HealthDescription, "no-qemu")
	require.Empty(t, fp.Attributes)
}

func TestFingerprint(t *testing.T) {
	needVM(t)
	fp := New(Config{}).Fingerprint(context.Background())
	require.True(t, fp.Healthy)
	require.Equal(t, "1", fp.Attributes["driver.qemu"])
	require.Regexp(t, `^\d+\.\d+\.\d+$`, fp.Attributes["driver.qemu.version"])
	require.Equal(t, kvmUsable(), fp.Attributes["driver.qemu.kvm"] == "true")
}
