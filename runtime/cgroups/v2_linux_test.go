//go:build linux

package cgroups

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// These tests run the v2 code paths against a directory tree shaped like
// a unified hierarchy (this machine and CI run v1): they check what is
// written and how what the kernel would write is read, not the kernel.

// fakeUnified makes a v2 mount point with the parent's files in place.
func fakeUnified(t *testing.T) (*Manager, string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{root, filepath.Join(root, "troupe.slice")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), nil, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "cgroup.controllers"),
		[]byte("cpuset cpu io memory hugetlb pids rdma misc\n"), 0o644))
	m, err := newManager(ModeV2, root, "")
	require.NoError(t, err)
	require.Equal(t, "/troupe.slice", m.parent)
	return m, root
}

func TestV2LimitsAreWritten(t *testing.T) {
	m, root := fakeUnified(t)
	g, err := m.Create(GroupName(ModeV2, "a1", "web"), Resources{CPUShares: 1024, MemoryMax: 64 << 20,
		MemorySoft: 32 << 20, Cpuset: "0-1", PidsMax: 100})
	require.NoError(t, err)
	dir := filepath.Join(root, "troupe.slice", "a1.web.scope")
	require.Equal(t, "/troupe.slice/a1.web.scope", g.Path())
	want := map[string]string{
		"memory.max": "67108864", "memory.low": "33554432", "pids.max": "100",
		"cpuset.cpus": "0-1", "cpu.weight": "100", // 1024 shares: the default weight
	}
	for f, v := range want {
		require.Equal(t, v, readFile(t, filepath.Join(dir, f)), f)
	}
	ctl := readFile(t, filepath.Join(root, "troupe.slice", "cgroup.subtree_control"))
	for _, c := range []string{"+cpu", "+cpuset", "+memory", "+pids"} {
		require.Contains(t, ctl, c)
	}
}

func TestV2StatsOOMProcsKill(t *testing.T) {
	m, root := fakeUnified(t)
	g, err := m.Create("a2.web.scope", Resources{MemoryMax: 64 << 20})
	require.NoError(t, err)
	dir := filepath.Join(root, "troupe.slice", "a2.web.scope")
	files := map[string]string{
		"memory.stat":    "anon 20971520\nfile 4096\nkernel_stack 16384\nslab 8192\nsock 0\n",
		"memory.current": "21000000", "memory.peak": "22000000", "memory.swap.current": "0",
		"cpu.stat":      "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 10\nnr_throttled 3\nthrottled_usec 70\n",
		"memory.events": "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n",
		"cgroup.procs":  "42\n43\n",
		"cgroup.type":   "domain\n",
	}
	for f, v := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644))
	}
	s, err := g.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(20971520), s.RSS)
	require.Equal(t, uint64(4096), s.Cache)
	require.Equal(t, uint64(21000000), s.Usage)
	require.Equal(t, uint64(22000000), s.MaxUsage)
	require.Equal(t, uint64(16384+8192), s.KernelUsage)
	require.Equal(t, uint64(1_500_000), s.CPUTotal)
	require.Equal(t, uint64(1_000_000), s.CPUUser)
	require.Equal(t, uint64(500_000), s.CPUSystem)
	require.Equal(t, uint64(3), s.ThrottledPeriods)
	require.Equal(t, uint64(70_000), s.ThrottledTime)
	require.Equal(t, memoryMeasuredV2, s.MemoryMeasured)
	n, err := g.OOMKills()
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
	procs, err := g.Procs()
	require.NoError(t, err)
	require.Equal(t, []int{42, 43}, procs)
	require.NoError(t, g.Kill())
	require.Equal(t, "1", readFile(t, filepath.Join(dir, "cgroup.kill")))

	loaded, err := m.Load(g.Path())
	require.NoError(t, err)
	require.Equal(t, g.Path(), loaded.Path())
	_, err = m.Load("/troupe.slice/gone.scope")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = m.Load("/")
	require.ErrorIs(t, err, ErrInvalidName)
}

func TestV2OwnGroup(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cgroup")
	require.NoError(t, os.WriteFile(f, []byte("0::/system.slice/troupe.service\n"), 0o644))
	p, err := ownGroupV2(f)
	require.NoError(t, err)
	require.Equal(t, "/system.slice/troupe.service", p)
	require.NoError(t, os.WriteFile(f, []byte("4:memory:/x\n"), 0o644))
	_, err = ownGroupV2(f)
	require.Error(t, err)
}

func TestV2ResourcesLeaveUnsetControllersOut(t *testing.T) {
	r := v2Resources(Resources{PidsMax: 10})
	require.Nil(t, r.CPU)
	require.Nil(t, r.Memory)
	require.Equal(t, int64(10), r.Pids.Max)
	require.ElementsMatch(t, []string{"pids"}, r.EnabledControllers())
}
