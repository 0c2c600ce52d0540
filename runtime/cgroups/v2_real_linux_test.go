//go:build linux

package cgroups

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// These tests run the v2 code against a real cgroup2 hierarchy, mounted
// for the test in a directory of its own: on a v2 host it is the host's
// hierarchy with its controllers; on a hybrid or v1 host (this machine,
// CI) it is the unified hierarchy with the controllers v1 left free
// (often none), which is what a missing controller looks like.

// realUnified mounts cgroup2 and returns a v2 Manager below a parent of
// the test's own and the controllers the hierarchy offers. It skips only
// a non-root user; as root (CI) a mount that fails fails the test.
func realUnified(t *testing.T) (*Manager, []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a real cgroup2 hierarchy needs root (mount -t cgroup2)")
	}
	root := t.TempDir()
	require.NoError(t, unix.Mount("none", root, "cgroup2", 0, ""), "mounting cgroup2 at %s", root)
	parent := fmt.Sprintf("/troupe-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"))
	m, err := newManager(ModeV2, root, parent)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := m.RemoveParent(); err != nil {
			t.Errorf("removing %s: %v", parent, err)
		}
		_ = unix.Unmount(root, unix.MNT_DETACH)
	})
	have := strings.Fields(readFile(t, filepath.Join(root, "cgroup.controllers")))
	t.Logf("cgroup2 offers controllers %q", have)
	return m, have
}

// limitsFor sets the limits whose controllers the hierarchy offers.
func limitsFor(have []string) Resources {
	var r Resources
	if slices.Contains(have, "memory") {
		r.MemoryMax = 64 << 20
	}
	if slices.Contains(have, "pids") {
		r.PidsMax = 100
	}
	if slices.Contains(have, "cpu") {
		r.CPUShares = 1024
	}
	return r
}

// TestV2RealCreateKillDelete: on a real unified hierarchy a group is
// made with the limits the controllers offered allow, a daemonising
// child (setsid and a double fork) is born in it, its processes and CPU
// are read from it, Kill empties it (cgroup.kill) and Delete removes it.
func TestV2RealCreateKillDelete(t *testing.T) {
	m, have := realUnified(t)
	r := limitsFor(have)
	g, err := m.Create(GroupName(ModeV2, "a1", "web"), r)
	require.NoError(t, err)
	dir := filepath.Join(m.root, g.Path())
	require.DirExists(t, dir)
	if r.MemoryMax > 0 {
		require.Equal(t, fmt.Sprint(r.MemoryMax), readFile(t, filepath.Join(dir, "memory.max")))
	}
	if r.PidsMax > 0 {
		require.Equal(t, "100", readFile(t, filepath.Join(dir, "pids.max")))
	}
	if r.CPUShares > 0 {
		require.Equal(t, "100", readFile(t, filepath.Join(dir, "cpu.weight")))
	}

	cmd := startIn(t, g, `setsid sh -c 'sleep 1001 &' & i=0; while :; do i=$((i+1)); done`)
	own, err := ownGroupV2("/proc/self/cgroup")
	require.NoError(t, err)
	require.NotEqual(t, g.Path(), own, "Enter's leave moved us back")
	child, err := ownGroupV2(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	require.NoError(t, err)
	require.Equal(t, g.Path(), child, "the child is born in the group")
	waitFor(t, "the shell and the daemon in the group", func() bool {
		procs, err := g.Procs()
		return err == nil && len(procs) >= 2
	})
	waitFor(t, "CPU time in cpu.stat", func() bool {
		s, err := g.Stats()
		return err == nil && s.CPUTotal > 10_000_000
	})
	names, err := m.Groups()
	require.NoError(t, err)
	require.Equal(t, []string{"a1.web.scope"}, names)

	require.NoError(t, g.Kill())
	waitFor(t, "an empty group", func() bool {
		procs, err := g.Procs()
		return err == nil && len(procs) == 0
	})
	loaded, err := m.Load(g.Path())
	require.NoError(t, err)
	require.NoError(t, loaded.Delete())
	require.NoDirExists(t, dir)
	_, err = m.Load(g.Path())
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestV2RealMissingControllerIsAnError: a limit whose controller the
// hierarchy does not offer is refused, naming the controller, and no
// group is left behind (rather than a group that does not limit).
func TestV2RealMissingControllerIsAnError(t *testing.T) {
	m, have := realUnified(t)
	asks := []struct {
		controller string
		r          Resources
	}{
		{"memory", Resources{MemoryMax: 64 << 20}},
		{"pids", Resources{PidsMax: 10}},
		{"cpu", Resources{CPUShares: 500}},
		{"cpuset", Resources{Cpuset: "0"}},
	}
	tried := 0
	for _, a := range asks {
		if slices.Contains(have, a.controller) {
			continue
		}
		tried++
		_, err := m.Create("a2."+a.controller+".scope", a.r)
		require.ErrorIs(t, err, ErrControllerMissing, a.controller)
		require.Contains(t, err.Error(), a.controller+" not available")
		require.NoDirExists(t, filepath.Join(m.root, m.PathOf("a2."+a.controller+".scope")))
	}
	if tried == 0 {
		t.Skipf("this hierarchy offers every controller asked for (%q): none is missing", have)
	}
}

// TestV2RealOOMKill: with the memory controller (a v2 host), a task over
// its memory.max is OOM-killed and counted in memory.events.
func TestV2RealOOMKill(t *testing.T) {
	m, have := realUnified(t)
	if !slices.Contains(have, "memory") {
		t.Skipf("this cgroup2 hierarchy has no memory controller (it offers %q; the host binds memory to v1)", have)
	}
	g, err := m.Create("a3.hog.scope", Resources{MemoryMax: 16 << 20})
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Delete()) }()
	cmd := startIn(t, g, `exec perl -e '$x = "a" x (64*1024*1024); sleep 60'`)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	n, err := g.OOMKills()
	require.NoError(t, err)
	require.Equal(t, uint64(1), n)
}
