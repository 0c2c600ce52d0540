//go:build linux

package ctrdtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	"github.com/stretchr/testify/require"
)

// startSleeper imports the busybox archive and runs "sleep 60" in
// container id; it returns the task's pid.
func startSleeper(t *testing.T, dm *Daemon, id string) uint32 {
	archive, name := BusyboxArchive(t, t.TempDir())
	cl, ctx := dm.Client(t)
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	_, err = cl.Import(ctx, f)
	require.NoError(t, err)
	img, err := cl.GetImage(ctx, name)
	require.NoError(t, err)
	require.NoError(t, img.Unpack(ctx, ""))
	c, err := cl.NewContainer(ctx, id, client.WithImage(img), client.WithNewSnapshot(id, img),
		client.WithNewSpec(oci.WithImageConfig(img), oci.WithProcessArgs("sleep", "60")))
	require.NoError(t, err)
	tsk, err := c.NewTask(ctx, cio.NullIO)
	require.NoError(t, err)
	require.NoError(t, tsk.Start(ctx))
	return tsk.Pid()
}

// hostState lists what task id of dm's namespace keeps outside dm's dir:
// its cgroups, runc's state and the shim's socket.
func hostState(dm *Daemon, id string) []string {
	paths, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", dm.Namespace(), id))
	paths = append(paths, filepath.Join("/sys/fs/cgroup", dm.Namespace(), id),
		filepath.Join(runcRoot, dm.Namespace(), id), dm.ShimSocket(id))
	var there []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			there = append(there, p)
		}
	}
	return there
}

func alive(pid uint32) bool { return syscall.Kill(int(pid), 0) == nil }

func TestStopStartKeepsTasks(t *testing.T) {
	dm := StartDaemon(t)
	pid := startSleeper(t, dm, "c1")
	require.NoError(t, dm.Stop())
	require.NoError(t, dm.Stop(), "stopping twice does nothing")
	require.True(t, alive(pid), "the task outlives containerd")
	require.NoError(t, dm.Start())
	require.Error(t, dm.Start(), "it is running already")

	cl, ctx := dm.Client(t)
	c, err := cl.LoadContainer(ctx, "c1")
	require.NoError(t, err)
	tsk, err := c.Task(ctx, nil)
	require.NoError(t, err)
	st, err := tsk.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, client.Running, st.Status)
	require.Equal(t, pid, tsk.Pid())
}

func TestWipeStateIsAReboot(t *testing.T) {
	dm := StartDaemon(t)
	pid := startSleeper(t, dm, "c1")
	before := hostState(dm, "c1")
	require.Contains(t, before, dm.ShimSocket("c1"))
	require.Contains(t, before, filepath.Join(runcRoot, dm.Namespace(), "c1"))
	require.Greater(t, len(before), 2, "and the task's cgroups")

	require.NoError(t, dm.WipeState())
	require.False(t, alive(pid), "the task is dead and reaped")
	require.Empty(t, hostState(dm, "c1"))
	require.NoDirExists(t, filepath.Join(dm.dir, "state"))
	require.NoError(t, dm.Start())
	require.Equal(t, []string{"c1"}, dm.Containers(t), "the root keeps the container")
	require.Equal(t, []string{"c1"}, dm.ActiveSnapshots(t, "overlayfs"), "and its snapshot")
	cl, ctx := dm.Client(t)
	c, err := cl.LoadContainer(ctx, "c1")
	require.NoError(t, err)
	_, err = c.Task(ctx, nil)
	require.True(t, errdefs.IsNotFound(err), "the task is gone: %v", err)
}

func TestCloseLeavesNothing(t *testing.T) {
	dm := StartDaemon(t)
	pid := startSleeper(t, dm, "c1")
	require.NoError(t, dm.Close())
	require.False(t, alive(pid))
	require.Empty(t, hostState(dm, "c1"))
	nsDirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", dm.Namespace()))
	require.Empty(t, nsDirs)
	require.NoDirExists(t, filepath.Join(runcRoot, dm.Namespace()))
	require.NoDirExists(t, dm.dir)
	require.NoError(t, dm.Close(), "closing twice does nothing")
	require.Error(t, dm.Start(), "a closed daemon does not start")
}

func TestDaemonsAreApart(t *testing.T) {
	a, b := StartDaemon(t), StartDaemon(t)
	require.NotEqual(t, a.Address(), b.Address())
	require.NotEqual(t, a.Namespace(), b.Namespace())
	pid := startSleeper(t, a, "c1")
	before := hostState(a, "c1")
	require.NoError(t, b.WipeState())
	require.True(t, alive(pid), "wiping one daemon spares the other's tasks")
	require.Equal(t, before, hostState(a, "c1"))
	require.Equal(t, []string{"c1"}, a.Containers(t))
	require.NoError(t, b.Start())
	require.Empty(t, b.Containers(t))
}
