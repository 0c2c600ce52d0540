//go:build linux

package containerd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestTaskStats: a container holding 20 MB shows it in its usage, read
// from the cgroup runc made for it.
func TestTaskStats(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg := e.taskConfig(t, `x=$(head -c 20000000 /dev/zero | tr '\0' a); echo held; sleep 1000; echo done`) // not the last command: ash would exec it
	cfg.MemoryMB = 128
	e.start(t, d, cfg)
	waitOutput(t, cfg.StdoutPath, "held\n")
	var u *driver.TaskUsage
	require.Eventually(t, func() bool {
		var err error
		u, err = d.TaskStats(context.Background(), cfg.ID)
		require.NoError(t, err)
		return u.Memory.RSS >= 20_000_000
	}, 20*time.Second, 50*time.Millisecond)
	require.GreaterOrEqual(t, u.Memory.Usage, uint64(20_000_000))
	require.Contains(t, u.CPU.Measured, "Percent")
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, time.Second, ""))
	_, err := d.TaskStats(context.Background(), cfg.ID)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
}
