//go:build linux

package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// These tests run real tasks in real cgroups (v1 here and in CI); they
// need root.

func needCgroupsV1(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	if cgroups.Detect() != cgroups.ModeV1 {
		t.Skip("these tests read the cgroup v1 files; this host runs " + cgroups.Detect().String())
	}
	if _, err := osexec.LookPath("perl"); err != nil {
		t.Skip("perl allocates the tasks' memory")
	}
}

// v1File reads a controller's file of a task's group.
func v1File(t *testing.T, controller, group, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", controller, group, file))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func stateOf(t *testing.T, h *driver.TaskHandle) handleState {
	t.Helper()
	var st handleState
	require.NoError(t, json.Unmarshal(h.State, &st))
	return st
}

// hold is a script whose task holds mib MiB until killed.
func hold(mib int) string {
	return fmt.Sprintf(`exec perl -e '$x = "a" x (%d*1024*1024); sleep 1000'`, mib)
}

func startCfg(t *testing.T, d *Driver, cfg *driver.TaskConfig) *driver.TaskHandle {
	t.Helper()
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	return h
}

func TestCgroupLimitsStatsAndTeardown(t *testing.T) {
	needCgroupsV1(t)
	d := newDriver(t)
	cfg := shellConfig(t.TempDir(), "alloc/limits", hold(24))
	cfg.CPU, cfg.MemoryMB, cfg.MemoryMaxMB, cfg.Cores = 250, 64, 128, 1
	h := startCfg(t, d, cfg)
	st := stateOf(t, h)
	require.Equal(t, d.cfg.CgroupParent+"/alloc.limits", st.Cgroup, "Nomad's <alloc>.<task> below the parent")
	require.Equal(t, "250", v1File(t, "cpu", st.Cgroup, "cpu.shares"))
	require.Equal(t, strconv.Itoa(128<<20), v1File(t, "memory", st.Cgroup, "memory.limit_in_bytes"))
	require.Equal(t, strconv.Itoa(64<<20), v1File(t, "memory", st.Cgroup, "memory.soft_limit_in_bytes"))
	require.Equal(t, strconv.Itoa(cgroups.DefaultPidsLimit), v1File(t, "pids", st.Cgroup, "pids.max"))
	require.Equal(t, "0", v1File(t, "cpuset", st.Cgroup, "cpuset.cpus"), "one whole core")
	require.Equal(t, "0", st.Cpuset)

	// The task was born in its group; the executor is not in it.
	own, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", h.Pid))
	require.NoError(t, err)
	require.Contains(t, string(own), "memory:"+st.Cgroup)
	exe, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", st.ExecutorPid))
	require.NoError(t, err)
	require.NotContains(t, string(exe), st.Cgroup)

	var u *driver.TaskUsage
	require.Eventually(t, func() bool {
		u, err = d.TaskStats(context.Background(), cfg.ID)
		require.NoError(t, err)
		return u.Memory.RSS >= 24<<20
	}, 20*time.Second, 20*time.Millisecond, "RSS of a task holding 24 MiB")
	require.GreaterOrEqual(t, u.Memory.Usage, uint64(24<<20))
	require.Contains(t, u.Memory.Measured, "RSS")
	require.Contains(t, u.CPU.Measured, "Percent")

	// A second task asking for a core gets another one, or none is left.
	other := shellConfig(t.TempDir(), "alloc/other", "exec sleep 1000")
	other.Cores = 1
	online := parseCPUList(strings.TrimSpace(readOnline(t)))
	if len(online) > 1 {
		oh := startCfg(t, d, other)
		require.NotEqual(t, "0", stateOf(t, oh).Cpuset)
		require.NoError(t, d.DestroyTask(context.Background(), other.ID, true))
	} else {
		_, err := d.StartTask(context.Background(), other)
		require.ErrorIs(t, err, driver.ErrInvalidConfig)
	}

	require.NoError(t, d.StopTask(context.Background(), cfg.ID, time.Second, ""))
	require.NoError(t, d.DestroyTask(context.Background(), cfg.ID, false))
	for _, c := range []string{"memory", "cpu", "cpuset", "pids", "freezer"} {
		_, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, st.Cgroup))
		require.ErrorIs(t, err, os.ErrNotExist, "%s group removed at teardown", c)
	}
}

func readOnline(t *testing.T) string {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	require.NoError(t, err)
	return string(b)
}

func TestCgroupOOMKilled(t *testing.T) {
	needCgroupsV1(t)
	d := newDriver(t)
	cfg := shellConfig(t.TempDir(), "alloc/hog", hold(128))
	cfg.MemoryMB = 32
	startCfg(t, d, cfg)
	r := result(t, d, cfg.ID)
	require.NoError(t, r.Err)
	require.True(t, r.OOMKilled, "result %+v", r)
	require.Equal(t, 137, r.ExitCode)
	require.Equal(t, int(syscall.SIGKILL), r.Signal)
	require.NoError(t, d.DestroyTask(context.Background(), cfg.ID, false))
}

// daemonScript starts a daemon (setsid and a double fork) that writes its
// pid, then waits.
const daemonScript = `(setsid sh -c 'sleep 1001 & echo $! > daemon.pid' &) ; exec sleep 1000`

func daemonPid(t *testing.T, dir string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(waitFileLine(t, filepath.Join(dir, "daemon.pid"))))
	require.NoError(t, err)
	return pid
}

// waitFileLine waits for a file with a whole line in it.
func waitFileLine(t *testing.T, path string) string {
	t.Helper()
	var s string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		s = string(b)
		return err == nil && strings.HasSuffix(s, "\n")
	}, 10*time.Second, 10*time.Millisecond, "%s never written", path)
	return s
}

func TestCgroupDaemonDiesOnStop(t *testing.T) {
	needCgroupsV1(t)
	d := newDriver(t)
	dir := t.TempDir()
	cfg := shellConfig(dir, "alloc/daemon", daemonScript)
	startCfg(t, d, cfg)
	pid := daemonPid(t, dir)
	ticks, err := StartTicks(pid)
	require.NoError(t, err)
	require.NoError(t, d.StopTask(context.Background(), cfg.ID, 5*time.Second, ""))
	require.Eventually(t, func() bool { return !alive(pid, ticks) }, 10*time.Second, 10*time.Millisecond,
		"the daemon (its own session, reparented) died with the task")
	require.NoError(t, d.DestroyTask(context.Background(), cfg.ID, false))
}

// TestCgroupSurvivesRecover: a new driver (an agent restarted) finds the
// task's group by its path, reads its usage, kills its daemon through it
// on stop and removes it at teardown.
func TestCgroupSurvivesRecover(t *testing.T) {
	needCgroupsV1(t)
	a := newDriver(t)
	dir := t.TempDir()
	cfg := shellConfig(dir, "alloc/kept", daemonScript)
	cfg.Cores = 1
	h := startCfg(t, a, cfg)
	pid := daemonPid(t, dir)
	ticks, err := StartTicks(pid)
	require.NoError(t, err)
	a.Shutdown()
	h = roundTrip(t, h)
	st := stateOf(t, h)
	require.DirExists(t, filepath.Join("/sys/fs/cgroup/memory", st.Cgroup))

	b := newDriver(t)
	ctx := context.Background()
	require.NoError(t, b.RecoverTask(ctx, h))
	u, err := b.TaskStats(ctx, cfg.ID)
	require.NoError(t, err)
	require.Positive(t, u.Memory.Usage)
	// Its core is taken back: a task asking for every core cannot have it.
	all := shellConfig(t.TempDir(), "alloc/all", "exit 0")
	all.Cores = len(parseCPUList(strings.TrimSpace(readOnline(t))))
	_, err = b.StartTask(ctx, all)
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
	require.NoError(t, b.StopTask(ctx, cfg.ID, 5*time.Second, ""))
	require.Eventually(t, func() bool { return !alive(pid, ticks) }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, b.DestroyTask(ctx, cfg.ID, false))
	_, err = os.Stat(filepath.Join("/sys/fs/cgroup/memory", st.Cgroup))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// testCgroupParent is a cgroup parent of the test's own; once the test
// ends (its tasks killed by then), the groups left below it and it are
// removed.
func testCgroupParent(t *testing.T) string {
	parent := "/troupe-test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	t.Cleanup(func() {
		m, err := cgroups.New(parent)
		if err != nil {
			return
		}
		entries, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup/memory", parent))
		for _, e := range entries {
			if g, err := m.Load(parent + "/" + e.Name()); e.IsDir() && err == nil {
				require.NoError(t, g.Delete())
			}
		}
		for _, c := range []string{"cpu", "cpuacct", "cpuset", "memory", "pids", "freezer"} {
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", c, parent))
		}
	})
	return parent
}

func TestParseCPUList(t *testing.T) {
	require.Equal(t, []int{0, 1, 2, 3, 8}, parseCPUList("0-3,8"))
	require.Equal(t, []int{5}, parseCPUList("x,5,3-1"))
	require.Empty(t, parseCPUList(""))
}

func TestTaskResources(t *testing.T) {
	for _, tc := range []struct {
		name           string
		mem, memMax    int64
		wantMax, wantS int64
	}{
		{"memory only: hard", 64, 0, 64 << 20, 0},
		{"memory_max: hard, memory soft", 64, 128, 128 << 20, 64 << 20},
		{"memory_max below memory: memory", 64, 32, 64 << 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cgroups.TaskResources(&driver.TaskConfig{CPU: 100, MemoryMB: tc.mem, MemoryMaxMB: tc.memMax}, "", 0)
			require.Equal(t, tc.wantMax, r.MemoryMax)
			require.Equal(t, tc.wantS, r.MemorySoft)
			require.Equal(t, uint64(100), r.CPUShares)
			require.Equal(t, int64(cgroups.DefaultPidsLimit), r.PidsMax)
		})
	}
}
