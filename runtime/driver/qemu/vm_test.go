//go:build linux

package qemu

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/qemu/qemutest"
	"github.com/troupe-dev/troupe/runtime/logmon/logmontest"
)

// bootWait bounds a TCG boot of the test kernel (~5-20 s on 2 busy cores).
const bootWait = 3 * time.Minute

// needVM skips for a non-root user; as root (CI) a missing qemu or kernel
// fails the test.
func needVM(t *testing.T) *qemutest.Kernel {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("qemu VM tests run as root (CI), with scripts/setup.sh's qemu-system-x86 and kernel")
	}
	fp := New(Config{}).Fingerprint(context.Background())
	require.True(t, fp.Detected, "qemu-system-x86_64 not usable (run scripts/setup.sh): %s", fp.HealthDescription)
	k, err := qemutest.FindKernel()
	require.NoError(t, err)
	return k
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond every 50 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, d, 50*time.Millisecond, what)
}

// TestVMBootServeRecoverPowerdown boots a kernel with a busybox initramfs
// on TCG, reads the guest's marker from the task's stdout (the serial
// console), fetches its HTTP page through the forwarded host port,
// re-attaches with a new driver after the first one shut down (an agent
// restart), and stops it: the guest handles system_powerdown (acpid) and
// qemu exits 0 before the kill timeout. Its logs rotate (files of 32
// bytes here: every line of the two markers gets a file of its own),
// through the forwarder that outlives the first driver: the powerdown
// marker, logged after the restart, is there, and a follower that read
// from the start, across rotation, read exactly what the files hold.
func TestVMBootServeRecoverPowerdown(t *testing.T) {
	k := needVM(t)
	root := t.TempDir()
	taskDir := filepath.Join(root, "a1", "vm")
	require.NoError(t, os.MkdirAll(taskDir, 0o755))
	initrd := filepath.Join(root, "initrd.gz")
	require.NoError(t, qemutest.BuildInitramfs(initrd, k, 8080, "served-by-the-guest\n"))
	require.NoError(t, os.WriteFile(filepath.Join(taskDir, "disk.img"), make([]byte, 1<<20), 0o644))
	port := freePort(t)
	cfg := &driver.TaskConfig{ID: "a1/vm", AllocID: "a1", TaskName: "vm", TaskDir: taskDir,
		StdoutPath: filepath.Join(taskDir, "stdout"), StderrPath: filepath.Join(taskDir, "stderr"),
		LogMaxFiles: 10000, LogMaxFileSizeMB: 1, MemoryMB: 256, CPU: 500,
		Env: map[string]string{"NOMAD_HOST_PORT_http": strconv.Itoa(port), "NOMAD_HOST_IP_http": "127.0.0.1"},
		Config: map[string]any{"image_path": "disk.img", "drive_interface": "virtio", "graceful_shutdown": true,
			"port_map": map[string]any{"http": float64(8080)},
			"args":     []any{"-kernel", k.Path, "-initrd", initrd, "-append", "console=ttyS0 quiet panic=-1", "-no-reboot"}}}
	const logUnit = 32
	d1 := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t), logUnit: logUnit})
	ctx := context.Background()
	follow := logmontest.Follow(cfg.StdoutPath, "")
	defer follow.Stop()
	h, err := d1.StartTask(ctx, cfg)
	require.NoError(t, err)
	require.True(t, alive(h.Pid, h.StartTicks))
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", h.Pid))
	require.Contains(t, string(cmdline), "accel=tcg")

	waitFor(t, bootWait, "the guest's marker on the serial console (task stdout)", func() bool {
		text, _ := follow.Text()
		return strings.Contains(text, qemutest.Marker)
	})
	body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
	require.Equal(t, "served-by-the-guest\n", body)

	// An agent restart: the first driver stops watching, the VM runs on.
	d1.Shutdown()
	require.True(t, alive(h.Pid, h.StartTicks), "the VM outlives its driver")
	d2 := New(Config{Logger: testLogger(t), CgroupParent: cgroupParent(t), logUnit: logUnit})
	defer d2.Shutdown()
	require.NoError(t, d2.RecoverTask(ctx, h))
	ch, err := d2.WaitTask(ctx, cfg.ID)
	require.NoError(t, err)
	require.Equal(t, "served-by-the-guest\n", httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/index.html", port)))
	// The re-attached VM's usage comes from the cgroup it kept.
	u, err := d2.TaskStats(ctx, cfg.ID)
	require.NoError(t, err)
	require.Positive(t, u.Memory.RSS)
	t.Logf("booted VM (guest %d MB, TCG): cgroup RSS %d MiB, max usage %d MiB",
		cfg.MemoryMB, u.Memory.RSS>>20, u.Memory.MaxUsage>>20)
	st, err := decodeHandle(h)
	require.NoError(t, err)
	require.NotEmpty(t, st.Cgroup)

	start := time.Now()
	require.NoError(t, d2.StopTask(ctx, cfg.ID, 2*time.Minute, ""))
	res := <-ch
	require.NoError(t, res.Err)
	require.Equal(t, 0, res.ExitCode, "qemu exits 0 when the guest powers off")
	require.Less(t, time.Since(start), 2*time.Minute, "powered down, not killed at the timeout")
	// the result came once the forwarder had written all and exited
	out := logmontest.CheckFiles(t, cfg.StdoutPath, 2, cfg.LogMaxFiles, logUnit)
	require.Contains(t, out, qemutest.PowerdownMarker, "the guest saw the power button")
	follow.Until(t, out, 30*time.Second)
	follow.Stop()
	followed, err := follow.Text()
	require.NoError(t, err)
	require.Equal(t, out, followed, "the follower read every byte once, in order")
	require.NoFileExists(t, cfg.StdoutPath, "the logs are rotated files, base.N")
	require.False(t, alive(h.Pid, h.StartTicks), "qemu is gone")
	require.NoError(t, d2.DestroyTask(ctx, cfg.ID, false))
	require.NoFileExists(t, filepath.Join(taskDir, monitorName))
	_, err = cgroupManager(t).Load(st.Cgroup)
	require.ErrorIs(t, err, os.ErrNotExist, "destroy removed the VM's cgroup")
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	var body string
	waitFor(t, 30*time.Second, "GET "+url, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return body
}
