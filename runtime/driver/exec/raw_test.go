//go:build linux

package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestRawMode: a raw driver is named raw_exec in its fingerprint and
// handles, ignores a task's isolation (the task runs as the agent's user
// on the host's root, in a cgroup), draws on the cores of the driver
// whose cgroups it shares, and recovers only its own handles; a disabled
// one is undetected and starts nothing.
func TestRawMode(t *testing.T) {
	needCgroupsV1(t)
	ctx := context.Background()
	execDrv := newDriver(t)
	raw := newDriver(t, func(c *Config) { c.Raw, c.CgroupsOf = true, execDrv })
	fp := raw.Fingerprint(ctx)
	require.True(t, fp.Detected)
	require.Equal(t, map[string]string{"driver.raw_exec": "1"}, fp.Attributes)
	require.Equal(t, RawName, raw.Name())

	host := filepath.Join(t.TempDir(), "host-file")
	require.NoError(t, os.WriteFile(host, []byte("host\n"), 0o600))
	dir := t.TempDir()
	cfg := shellConfig(dir, "alloc/raw", `id -u > out; cat `+host+` >> out; grep -c troupe-test /proc/self/cgroup >> out; sleep 1000`)
	cfg.Isolation = &driver.Isolation{AllocDir: t.TempDir()}
	cfg.Cores = len(parseCPUList(strings.TrimSpace(readOnline(t))))
	h := startCfg(t, raw, cfg)
	require.Equal(t, RawName, h.Driver)
	var out []byte
	require.Eventually(t, func() bool {
		out, _ = os.ReadFile(filepath.Join(dir, "out"))
		return strings.Count(string(out), "\n") == 3
	}, 10*time.Second, 10*time.Millisecond)
	lines := strings.Split(string(out), "\n")
	require.Equal(t, "0", lines[0], "the agent's user, not nobody")
	require.Equal(t, "host", lines[1], "the host's root")
	require.NotEqual(t, "0", lines[2], "in a cgroup below the driver's parent: %s", out)

	one := shellConfig(t.TempDir(), "alloc/exec", "exit 0")
	one.Cores = 1
	_, err := execDrv.StartTask(ctx, one)
	require.ErrorIs(t, err, driver.ErrInvalidConfig, "the raw task holds every core of the shared pool")
	require.ErrorContains(t, err, "cores asked")

	wrong := *h
	wrong.Driver = Name
	require.ErrorIs(t, raw.RecoverTask(ctx, &wrong), driver.ErrInvalidHandle)
	require.ErrorIs(t, execDrv.RecoverTask(ctx, h), driver.ErrInvalidHandle, "exec does not take raw_exec handles")

	require.NoError(t, raw.StopTask(ctx, cfg.ID, 5*time.Second, ""))
	require.NoError(t, raw.DestroyTask(ctx, cfg.ID, false))
	h2 := startCfg(t, execDrv, one) // the cores are back in the pool
	require.Equal(t, Name, h2.Driver)

	off := newDriver(t, func(c *Config) { c.Raw, c.Disabled = true, true })
	fp = off.Fingerprint(ctx)
	require.False(t, fp.Detected)
	require.Empty(t, fp.Attributes)
	_, err = off.StartTask(ctx, shellConfig(t.TempDir(), "alloc/off", "exit 0"))
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
	require.ErrorContains(t, err, "raw_exec driver is disabled")
}
