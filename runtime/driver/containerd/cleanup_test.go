//go:build linux

package containerd

import (
	"context"
	"testing"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/leases"
	"github.com/opencontainers/image-spec/identity"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

func TestCleanup(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfgs := map[string]*driver.TaskConfig{}
	for _, name := range []string{"keep", "running", "exited"} {
		script := waitForStop + "0"
		if name == "exited" {
			script = "true"
		}
		cfg := e.taskConfig(t, script)
		cfg.TaskName, cfg.ID = name, cfg.AllocID+"/"+name
		e.start(t, d, cfg)
		cfgs[name] = cfg
	}
	require.True(t, result(t, d, cfgs["exited"].ID).Successful())
	runningCh, err := d.WaitTask(context.Background(), cfgs["running"].ID)
	require.NoError(t, err)

	// A crash between preparing a snapshot and creating its container
	// leaves an orphan, held by the start's lease.
	cl, ctx := e.client(t)
	lease, err := cl.LeasesService().Create(ctx, leases.WithRandomID())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cl.LeasesService().Delete(ctx, lease)) })
	img, err := cl.GetImage(ctx, ctrdtest.BusyboxImage)
	require.NoError(t, err)
	diffIDs, err := img.RootFS(ctx)
	require.NoError(t, err)
	sn := cl.SnapshotService(DefaultSnapshotter)
	_, err = sn.Prepare(leases.WithLease(ctx, lease.ID), "orphan", identity.ChainID(diffIDs).String())
	require.NoError(t, err)
	require.Contains(t, e.activeSnapshots(t), "orphan")

	keepID := ContainerID(cfgs["keep"].ID)
	var asked []string
	require.NoError(t, d.Cleanup(context.Background(), func(id string) bool {
		asked = append(asked, id)
		return id == keepID
	}))
	require.Equal(t, []string{keepID}, e.containers(t))
	require.Equal(t, []string{keepID}, e.activeSnapshots(t))
	require.Contains(t, asked, ContainerID(cfgs["running"].ID))
	require.Contains(t, asked, "orphan")

	require.Equal(t, client.Running, e.taskStatus(t, cfgs["keep"].ID).Status)
	require.Equal(t, 9, recv(t, runningCh).Signal, "the stale task was killed")
	_, err = d.WaitTask(context.Background(), cfgs["running"].ID)
	require.ErrorIs(t, err, driver.ErrTaskNotFound, "the driver forgot the removed task")

	// Image layers stay: a new task starts from them.
	again := e.taskConfig(t, "true")
	again.ID = again.AllocID + "/again"
	e.start(t, d, again)
	require.True(t, result(t, d, again.ID).Successful())
	stopFile(t, cfgs["keep"])
	require.True(t, result(t, d, cfgs["keep"].ID).Successful())
}
