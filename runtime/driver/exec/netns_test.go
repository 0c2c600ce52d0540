//go:build linux

package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// requireRoot skips a test that needs root, or fails it under CI=true.
func requireRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s needs root (CI=true: not skipping)", why)
	}
	t.Skipf("%s needs root; skipping (CI=true makes this a failure)", why)
}

// newNetns makes a network namespace that lives as long as the test: a
// sleeping process unshared into it holds it, and it is also pinned on a
// file by a bind mount, as runtime/cni pins an allocation's. It returns
// the process's /proc path and the pinned file.
func newNetns(t *testing.T) (procPath, pinned string) {
	t.Helper()
	holder := osexec.Command("sleep", "1000")
	holder.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, holder.Start())
	t.Cleanup(func() {
		_ = holder.Process.Kill()
		_ = holder.Wait()
	})
	procPath = fmt.Sprintf("/proc/%d/ns/net", holder.Process.Pid)
	pinned = filepath.Join(t.TempDir(), "netns")
	require.NoError(t, os.WriteFile(pinned, nil, 0o600))
	require.NoError(t, unix.Mount(procPath, pinned, "", unix.MS_BIND, ""), "bind-mount the netns")
	t.Cleanup(func() { _ = unix.Unmount(pinned, unix.MNT_DETACH) })
	return procPath, pinned
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return st.Ino
}

// TestTaskJoinsNetns: the task's /proc/self/ns/net is the namespace that
// TaskConfig.NetnsPath names, not the host's, and the executor stays in
// the host's.
func TestTaskJoinsNetns(t *testing.T) {
	requireRoot(t, "joining a network namespace")
	procPath, pinned := newNetns(t)
	host := inode(t, "/proc/self/ns/net")
	want := inode(t, pinned)
	require.Equal(t, inode(t, procPath), want)
	require.NotEqual(t, host, want, "the test's namespace is a new one")

	for name, path := range map[string]string{"pinned file": pinned, "proc path": procPath} {
		t.Run(name, func(t *testing.T) {
			d := newDriver(t)
			cfg := shellConfig(t.TempDir(), "alloc/netns", "stat -L -c %i /proc/self/ns/net; "+
				"stat -L -c %i /proc/$PPID/ns/net")
			cfg.NetnsPath = path
			h, err := d.StartTask(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(func() { killTask(t, h) })
			res := result(t, d, cfg.ID)
			require.True(t, res.Successful(), "exit: %+v", res)
			out, err := os.ReadFile(cfg.StdoutPath)
			require.NoError(t, err)
			lines := strings.Fields(string(out))
			require.Len(t, lines, 2, "stdout: %q", out)
			require.Equal(t, fmt.Sprint(want), lines[0], "the task runs in the namespace it was given")
			require.Equal(t, fmt.Sprint(host), lines[1], "the executor stays in the host's namespace")
		})
	}
}

func TestTaskWithoutNetnsStaysOnHost(t *testing.T) {
	d := newDriver(t)
	cfg := shellConfig(t.TempDir(), "alloc/hostnet", "stat -L -c %i /proc/self/ns/net")
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	require.True(t, result(t, d, cfg.ID).Successful())
	out, err := os.ReadFile(cfg.StdoutPath)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(inode(t, "/proc/self/ns/net")), strings.TrimSpace(string(out)))
}

func TestNetnsErrors(t *testing.T) {
	t.Run("relative path", func(t *testing.T) {
		d := newDriver(t)
		cfg := shellConfig(t.TempDir(), "alloc/bad", "exit 0")
		cfg.NetnsPath = "netns/x"
		_, err := d.StartTask(context.Background(), cfg)
		require.ErrorIs(t, err, driver.ErrInvalidConfig)
		require.ErrorContains(t, err, `network namespace "netns/x" is not an absolute path`)
	})
	t.Run("missing namespace", func(t *testing.T) {
		d := newDriver(t)
		dir := t.TempDir()
		cfg := shellConfig(dir, "alloc/bad", "touch ran")
		cfg.NetnsPath = filepath.Join(dir, "no-such-netns")
		_, err := d.StartTask(context.Background(), cfg)
		require.ErrorIs(t, err, ErrTaskStart)
		require.ErrorContains(t, err, "network namespace")
		require.NoFileExists(t, filepath.Join(dir, "ran"), "the task never ran outside its namespace")
	})
	t.Run("not a namespace", func(t *testing.T) {
		requireRoot(t, "setns")
		d := newDriver(t)
		dir := t.TempDir()
		cfg := shellConfig(dir, "alloc/bad", "touch ran")
		cfg.NetnsPath = filepath.Join(dir, "stdout.log")
		require.NoError(t, os.WriteFile(cfg.NetnsPath, nil, 0o600))
		_, err := d.StartTask(context.Background(), cfg)
		require.ErrorIs(t, err, ErrTaskStart)
		require.ErrorContains(t, err, "joining")
		require.NoFileExists(t, filepath.Join(dir, "ran"))
	})
}
