//go:build linux

package cgroups

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// realManager returns a Manager on this host's cgroups below a parent of
// the test's own, removed at the end; it skips a non-root user.
func realManager(t *testing.T) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	if Detect() == ModeNone {
		t.Skip("no cgroup file system")
	}
	parent := fmt.Sprintf("/troupe-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"))
	m, err := New(parent)
	require.NoError(t, err)
	t.Cleanup(func() { removeParent(m) })
	return m
}

// removeParent removes the test's parent directories (empty by then).
func removeParent(m *Manager) {
	if m.mode == ModeV2 {
		_ = os.Remove(filepath.Join(m.root, m.parent))
		return
	}
	for _, c := range v1Controllers {
		_ = os.Remove(filepath.Join("/sys/fs/cgroup", string(c), m.parent))
	}
}

// startIn starts a shell script whose process enters g first.
func startIn(t *testing.T, g Group, script string) *exec.Cmd {
	t.Helper()
	leave, err := Enter(g)
	require.NoError(t, err)
	cmd := exec.Command("/bin/sh", "-c", script)
	startErr := cmd.Start()
	require.NoError(t, leave())
	require.NoError(t, startErr)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func requireV1(t *testing.T, m *Manager) {
	if m.Mode() != ModeV1 {
		t.Skipf("this host runs cgroup %s", m.Mode())
	}
}

func TestV1LimitsAreWritten(t *testing.T) {
	m := realManager(t)
	requireV1(t, m)
	g, err := m.Create("a1.web", Resources{CPUShares: 500, MemoryMax: 64 << 20, MemorySoft: 32 << 20,
		Cpuset: "0", PidsMax: 100})
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Delete()) }()
	p := g.Path()
	require.Equal(t, m.parent+"/a1.web", p)
	root := "/sys/fs/cgroup"
	require.Equal(t, "500", readFile(t, filepath.Join(root, "cpu", p, "cpu.shares")))
	require.Equal(t, fmt.Sprint(64<<20), readFile(t, filepath.Join(root, "memory", p, "memory.limit_in_bytes")))
	require.Equal(t, fmt.Sprint(32<<20), readFile(t, filepath.Join(root, "memory", p, "memory.soft_limit_in_bytes")))
	require.Equal(t, "0", readFile(t, filepath.Join(root, "cpuset", p, "cpuset.cpus")))
	require.Equal(t, "100", readFile(t, filepath.Join(root, "pids", p, "pids.max")))
}

func TestV1EnterKillStatsDelete(t *testing.T) {
	m := realManager(t)
	requireV1(t, m)
	g, err := m.Create("a2.web", Resources{MemoryMax: 256 << 20, PidsMax: 64})
	require.NoError(t, err)
	// A daemon: setsid and a double fork, then 20 MiB held.
	cmd := startIn(t, g, `setsid sh -c '(perl -e "\$x = q(a) x (20*1024*1024); sleep 600" &)' ; sleep 600`)
	own := readFile(t, "/proc/self/cgroup")
	require.NotContains(t, own, g.Path(), "Enter's leave moved us back")
	child := readFile(t, fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	require.Contains(t, child, "memory:"+g.Path())
	require.Contains(t, child, "freezer:"+g.Path())
	waitFor(t, "the daemon's 20 MiB", func() bool {
		s, err := g.Stats()
		require.NoError(t, err)
		return s.RSS >= 20<<20
	})
	s, err := g.Stats()
	require.NoError(t, err)
	require.GreaterOrEqual(t, s.Usage, uint64(20<<20))
	require.GreaterOrEqual(t, s.MaxUsage, s.Usage)
	require.Equal(t, memoryMeasuredV1, s.MemoryMeasured)
	procs, err := g.Procs()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(procs), 2, "the shell and the daemon")
	require.NoError(t, g.Kill())
	waitFor(t, "an empty group", func() bool {
		procs, err := g.Procs()
		return err == nil && len(procs) == 0
	})
	loaded, err := m.Load(g.Path())
	require.NoError(t, err)
	require.NoError(t, loaded.Delete())
	_, err = os.Stat(filepath.Join("/sys/fs/cgroup/memory", g.Path()))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = m.Load(g.Path())
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, loaded.Delete(), "deleting twice")
}

func TestV1OOMKill(t *testing.T) {
	m := realManager(t)
	requireV1(t, m)
	g, err := m.Create("a3.hog", Resources{MemoryMax: 16 << 20})
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Delete()) }()
	cmd := startIn(t, g, `exec perl -e '$x = "a" x (64*1024*1024); sleep 60'`)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	require.Equal(t, "signal: killed", ee.Error())
	n, err := g.OOMKills()
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
}

func TestV1CPUUsageAndPercent(t *testing.T) {
	m := realManager(t)
	requireV1(t, m)
	g, err := m.Create("a4.spin", Resources{CPUShares: 100})
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Delete()) }()
	startIn(t, g, `while :; do :; done`)
	first, err := g.Stats()
	require.NoError(t, err)
	var last *Stats
	waitFor(t, "CPU use", func() bool {
		last, err = g.Stats()
		require.NoError(t, err)
		return last.CPUTotal > first.CPUTotal+50_000_000
	})
	require.Greater(t, CPUPercent(first, last), 1.0)
	require.Greater(t, last.CPUUser+last.CPUSystem, uint64(0))
}

// TestV1GroupsAndRemoveParent: Groups lists the groups below the parent
// and RemoveParent kills the processes in them and removes them all,
// then the parent.
func TestV1GroupsAndRemoveParent(t *testing.T) {
	m := realManager(t)
	requireV1(t, m)
	names, err := m.Groups()
	require.NoError(t, err)
	require.Empty(t, names, "no parent yet")
	g, err := m.Create("a5.web", Resources{PidsMax: 10})
	require.NoError(t, err)
	_, err = m.Create("a6.db", Resources{})
	require.NoError(t, err)
	cmd := startIn(t, g, `setsid sh -c 'sleep 1003 &' & sleep 600`)
	names, err = m.Groups()
	require.NoError(t, err)
	require.Equal(t, []string{"a5.web", "a6.db"}, names)
	require.NoError(t, m.RemoveParent())
	require.Error(t, cmd.Wait(), "killed")
	for _, c := range v1Controllers {
		require.NoDirExists(t, filepath.Join("/sys/fs/cgroup", string(c), m.parent))
	}
	require.NoError(t, m.RemoveParent(), "a parent already gone")
}

// TestV1RemoveParentFindsAProcessInOneHierarchy: a process that is in a
// group's memory hierarchy only (as an executor is for a moment while it
// enters the group, one hierarchy after another) is found, killed, and
// the group removed; the listing of one hierarchy missed it and the
// memory group's removal failed with EBUSY.
func TestV1RemoveParentFindsAProcessInOneHierarchy(t *testing.T) {
	m := realManager(t)
	requireV1(t, m)
	_, err := m.Create("a7.web", Resources{})
	require.NoError(t, err)
	cmd := exec.Command("/bin/sleep", "1004")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	procs := filepath.Join("/sys/fs/cgroup/memory", m.parent, "a7.web", "cgroup.procs")
	require.NoError(t, os.WriteFile(procs, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644))
	g, err := m.Load(m.PathOf("a7.web"))
	require.NoError(t, err)
	got, err := g.Procs()
	require.NoError(t, err)
	require.Equal(t, []int{cmd.Process.Pid}, got)
	require.NoError(t, m.RemoveParent())
	require.Error(t, cmd.Wait(), "killed")
	for _, c := range v1Controllers {
		require.NoDirExists(t, filepath.Join("/sys/fs/cgroup", string(c), m.parent))
	}
}
