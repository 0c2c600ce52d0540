//go:build linux

package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

func TestIsolatedUserDenylist(t *testing.T) {
	requireRoot(t, "isolation")
	cfg, _ := isolated(t, "id -u")
	cfg.User = "root"
	_, err := newDriver(t).StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, driver.ErrInvalidConfig, "root is on Nomad's default user.denylist")
	require.ErrorContains(t, err, "user.denylist")

	d := newDriver(t)
	d.cfg.UserDenylist = []string{}
	out, _ := runIsolated(t, d, cfg)
	require.Equal(t, "0\n", out, "allowed with an empty denylist")

	cfg, _ = isolated(t, "id -u")
	cfg.User = "nobody"
	d.cfg.UserDenylist = []string{"nobody"}
	_, err = d.StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
}

func TestIsolatedVolumeAndNoMountLeft(t *testing.T) {
	requireRoot(t, "isolation")
	vol := t.TempDir()
	require.NoError(t, os.Chmod(vol, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(vol, "in"), []byte("from host\n"), 0o644))
	ro := t.TempDir()
	cfg, base := isolated(t, `cat /data/v0/in; echo out > /data/v0/out; echo x > /ro/x 2>/dev/null || echo ro-refused`)
	cfg.Isolation.Mounts = []driver.Mount{{Source: vol, Destination: "/data/v0"},
		{Source: ro, Destination: "/ro", ReadOnly: true}}
	out, _ := runIsolated(t, newDriver(t), cfg)
	require.Equal(t, "from host\nro-refused\n", out)
	data, err := os.ReadFile(filepath.Join(vol, "out"))
	require.NoError(t, err)
	require.Equal(t, "out\n", string(data))
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	require.NotContains(t, string(mounts), base, "a task's mounts stay in its namespace")
}

func TestIsolatedStartError(t *testing.T) {
	requireRoot(t, "isolation")
	cfg, _ := isolated(t, "")
	cfg.Config = map[string]any{"command": "no-such-program-here"}
	h, err := newDriver(t).StartTask(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { killTask(t, h) })
	}
	require.ErrorIs(t, err, ErrTaskStart)
	require.ErrorContains(t, err, "no-such-program-here")
}

func TestIsolatedExecAndRecover(t *testing.T) {
	requireRoot(t, "isolation")
	d := newDriver(t)
	cfg, _ := isolated(t, "echo ready > /local/ready; sleep 60")
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	waitFile(t, filepath.Join(cfg.TaskDir, "local", "ready"))
	d.Shutdown() // an agent restart: the task keeps running
	d2 := newDriver(t)
	require.NoError(t, d2.RecoverTask(context.Background(), roundTrip(t, h)))
	var stdout, stderr bytes.Buffer
	code, err := d2.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{
		Command: []string{"sh", "-c", `id -u; pwd; cat /proc/1/comm; ls / | tr '\n' ' '; cat ready; grep CapBnd /proc/self/status`},
		Stdout:  &stdout, Stderr: &stderr})
	require.NoError(t, err)
	require.Equal(t, 0, code, stderr.String())
	require.Equal(t, "65534\n/local\nsh\n"+strings.Join(rootEntries(), " ")+" ready\nCapBnd:\t00000000a80405fb\n", stdout.String())

	var pty bytes.Buffer
	code, err = d2.ExecTask(context.Background(), cfg.ID, &driver.ExecOptions{
		Command: []string{"sh"}, Tty: true, Stdin: strings.NewReader("test -t 0 && echo tty-$(cat /proc/1/comm)\nexit 5\n"), Stdout: &pty})
	require.NoError(t, err)
	require.Equal(t, 5, code, pty.String())
	require.Contains(t, pty.String(), "tty-sh")

	require.NoError(t, d2.StopTask(context.Background(), cfg.ID, 0, "SIGKILL"))
	r := result(t, d2, cfg.ID)
	require.Equal(t, 137, r.ExitCode)
}
