//go:build linux

package qemu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// groupFile reads one of a group's files: on v1 in the controller's
// hierarchy, on v2 in the unified one.
func groupFile(t *testing.T, controller, group, file string) string {
	t.Helper()
	p := filepath.Join("/sys/fs/cgroup", group, file)
	if cgroups.Detect() == cgroups.ModeV1 {
		p = filepath.Join("/sys/fs/cgroup", controller, group, file)
	}
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// TestVMCgroup: a VM (shim and qemu) is born in its task's cgroup below
// the driver's parent, with the task's memory plus qemu's overhead as the
// hard limit and its MHz as CPU shares; its usage comes from the group;
// stop kills through it and destroy removes it. Commands cannot be run
// in a VM.
func TestVMCgroup(t *testing.T) {
	needVM(t)
	if cgroups.Detect() == cgroups.ModeNone {
		t.Fatal("as root the host's cgroups must be usable")
	}
	parent := cgroupParent(t)
	d := New(Config{Logger: testLogger(t), CgroupParent: parent})
	defer d.Shutdown()
	ctx := context.Background()
	cfg := idleVM(t, false)
	cfg.CPU = 300
	h, err := d.StartTask(ctx, cfg)
	require.NoError(t, err)
	st, err := decodeHandle(h)
	require.NoError(t, err)
	group := parent + "/" + cgroups.GroupName(cgroups.Detect(), cfg.AllocID, cfg.TaskName)
	require.Equal(t, group, st.Cgroup)
	for _, pid := range []int{h.Pid, st.ShimPid} {
		own, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		require.NoError(t, err)
		require.Contains(t, string(own), group, "pid %d", pid)
	}
	limit := fmt.Sprint((cfg.MemoryMB + memoryOverheadMB) << 20)
	if cgroups.Detect() == cgroups.ModeV1 {
		require.Equal(t, limit, groupFile(t, "memory", group, "memory.limit_in_bytes"))
		require.Equal(t, "300", groupFile(t, "cpu", group, "cpu.shares"))
	} else {
		require.Equal(t, limit, groupFile(t, "memory", group, "memory.max"))
	}

	var u *driver.TaskUsage
	require.Eventually(t, func() bool {
		u, err = d.TaskStats(ctx, cfg.ID)
		return err == nil && u.Memory.RSS > 0 && u.CPU.Percent >= 0
	}, 10*time.Second, 50*time.Millisecond, "the VM's usage from its cgroup")
	require.Contains(t, u.Memory.Measured, "RSS")

	_, err = driver.ExecIn(ctx, d, cfg.ID, &driver.ExecOptions{Command: []string{"/bin/true"}})
	require.ErrorIs(t, err, driver.ErrExecNotSupported)
	require.ErrorContains(t, err, "the qemu driver cannot run commands in its tasks")

	ch, err := d.WaitTask(ctx, cfg.ID)
	require.NoError(t, err)
	require.NoError(t, d.StopTask(ctx, cfg.ID, 0, "SIGKILL"))
	res := <-ch
	require.Equal(t, 137, res.ExitCode, "%+v", res)
	require.Empty(t, groupFile(t, "memory", group, "cgroup.procs"), "nothing runs in the group")
	_, err = d.TaskStats(ctx, cfg.ID)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
	require.NoError(t, d.DestroyTask(ctx, cfg.ID, false))
	dir := filepath.Join("/sys/fs/cgroup", group)
	if cgroups.Detect() == cgroups.ModeV1 {
		dir = filepath.Join("/sys/fs/cgroup/memory", group)
	}
	require.NoDirExists(t, dir, "destroy removes the VM's group")
}

func TestVMResources(t *testing.T) {
	r := vmResources(&driver.TaskConfig{CPU: 500, MemoryMB: 256}, 256, 0)
	require.Equal(t, int64(256+memoryOverheadMB)<<20, r.MemoryMax)
	require.Equal(t, uint64(500), r.CPUShares)
	require.Equal(t, int64(cgroups.DefaultPidsLimit), r.PidsMax)
	r = vmResources(&driver.TaskConfig{MemoryMB: 256, MemoryMaxMB: 512}, 256, 10)
	require.Equal(t, int64(512+memoryOverheadMB)<<20, r.MemoryMax, "memory_max is the guest's ceiling")
	require.Equal(t, int64(256)<<20, r.MemorySoft)
	require.Equal(t, int64(10), r.PidsMax)
}

// cgroupManager is a Manager of the host's cgroups below the test's parent.
func cgroupManager(t *testing.T) *cgroups.Manager {
	t.Helper()
	m, err := cgroups.New(cgroupParent(t))
	require.NoError(t, err)
	return m
}
