package agent

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-uuid"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/cgroups"
)

// TestCgroupSweepKillsOrphans: an agent that starts finds below its
// cgroup parent a task group of an allocation it does not have (left by
// an agent that died), holding a process that daemonised: the process is
// killed and the group removed, while the group of the allocation it
// re-attached to keeps its running task, and a directory that is no
// task's group is left alone.
func TestCgroupSweepKillsOrphans(t *testing.T) {
	needCgroups(t)
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a := startAgent(t, cfg)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	_, _, err = c.Jobs().Register(loopJob("kept"), nil)
	require.NoError(t, err)
	kept := waitAllocStatus(t, c, "kept", "running")
	keptGroup := taskCgroupDir(a, "memory", kept.ID, "t")
	require.DirExists(t, keptGroup)
	crash(t, a)

	m, err := cgroups.New(cfg.CgroupParent)
	require.NoError(t, err)
	orphanID, err := uuid.GenerateUUID()
	require.NoError(t, err)
	g, err := m.Create(cgroups.GroupName(m.Mode(), orphanID, "web"), cgroups.Resources{})
	require.NoError(t, err)
	_, err = m.Create("not-a-task", cgroups.Resources{})
	require.NoError(t, err)
	// The orphan: a shell moved into the group before it goes on, which
	// starts a daemon (its own session) and waits.
	cmd := osexec.Command("/bin/sh", "-c", `read go; setsid sleep 1004 & exec sleep 1005`)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	require.NoError(t, g.AddProc(cmd.Process.Pid))
	_, err = stdin.Write([]byte("go\n"))
	require.NoError(t, err)
	orphanDir := filepath.Join("/sys/fs/cgroup/memory", g.Path())
	var daemon int
	require.Eventually(t, func() bool {
		daemon = groupProcess(orphanDir, "sleep\x001004\x00")
		return daemon > 0
	}, 10*time.Second, 10*time.Millisecond, "the orphan's daemon runs in its group")

	b := startAgent(t, testConfig(t, dir))
	defer b.Shutdown()
	require.Eventually(t, func() bool { return !alive(daemon) }, 20*time.Second, 10*time.Millisecond,
		"the orphan's daemon is killed")
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the orphan's shell was not killed")
	}
	require.Eventually(t, func() bool { return !dirExists(orphanDir) }, 10*time.Second, 10*time.Millisecond,
		"the orphan's group is removed")

	require.DirExists(t, keptGroup, "the re-attached allocation keeps its group")
	require.DirExists(t, filepath.Join("/sys/fs/cgroup/memory", m.PathOf("not-a-task")))
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	st, _, err := c.Allocations().Info(kept.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "running", st.ClientStatus)
	procs, err := os.ReadFile(filepath.Join(keptGroup, "cgroup.procs"))
	require.NoError(t, err)
	require.NotEmpty(t, strings.Fields(string(procs)), "the kept task still runs in its group")

	_, _, err = c.Jobs().Deregister("kept", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "kept", "complete")
}

func TestGroupAlloc(t *testing.T) {
	id := "8a0f7a3e-1c2b-4d5e-9f60-7a8b9c0d1e2f"
	for name, want := range map[string]string{id + ".web": id, id + ".web.scope": id} {
		got, ok := groupAlloc(name)
		require.True(t, ok, name)
		require.Equal(t, want, got)
	}
	for _, name := range []string{"not-a-task", "abc.web", id, id + ".", id + ".scope"} {
		_, ok := groupAlloc(name)
		require.False(t, ok, name)
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
