//go:build linux

package containerd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

// waitForStop is a task that prints before, waits for the file "stop"
// in its task dir, prints after and exits with code.
const waitForStop = `echo before; while [ ! -e /local/stop ]; do sleep 0.05; done; echo after; exit `

func stopFile(t *testing.T, cfg *driver.TaskConfig) {
	require.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "stop"), nil, 0o644))
}

func TestRecoverAfterAgentRestart(t *testing.T) {
	e := setupEnv(t)
	d1 := e.newDriver(t)
	cfg := e.taskConfig(t, waitForStop+"5")
	h := e.start(t, d1, cfg)
	waitOutput(t, cfg.StdoutPath, "before\n")
	pending, err := d1.WaitTask(context.Background(), cfg.ID)
	require.NoError(t, err)
	d1.Shutdown() // the agent stops; the task runs on
	require.ErrorIs(t, recv(t, pending).Err, driver.ErrShutdown)

	// The handle went through the state file as JSON.
	data, err := json.Marshal(h)
	require.NoError(t, err)
	var restored driver.TaskHandle
	require.NoError(t, json.Unmarshal(data, &restored))

	d2 := e.newDriver(t)
	require.NoError(t, d2.RecoverTask(context.Background(), &restored))
	require.NoError(t, d2.RecoverTask(context.Background(), &restored), "recovering twice is a no-op")
	st := e.taskStatus(t, cfg.ID)
	require.Equal(t, client.Running, st.Status)

	stopFile(t, cfg)
	r := result(t, d2, cfg.ID)
	require.NoError(t, r.Err)
	require.Equal(t, 5, r.ExitCode)
	waitOutput(t, cfg.StdoutPath, "before\nafter\n") // the shim kept writing
	require.NoError(t, d2.DestroyTask(context.Background(), cfg.ID, false))
	require.NotContains(t, e.containers(t), ContainerID(cfg.ID))
	require.NotContains(t, e.activeSnapshots(t), ContainerID(cfg.ID))
}

func TestRecoverTaskThatExitedMeanwhile(t *testing.T) {
	e := setupEnv(t)
	d1 := e.newDriver(t)
	cfg := e.taskConfig(t, waitForStop+"4")
	h := e.start(t, d1, cfg)
	waitOutput(t, cfg.StdoutPath, "before\n")
	d1.Shutdown()
	stopFile(t, cfg)
	require.Eventually(t, func() bool { return e.taskStatus(t, cfg.ID).Status == client.Stopped },
		10*time.Second, 10*time.Millisecond)

	d2 := e.newDriver(t)
	require.NoError(t, d2.RecoverTask(context.Background(), h))
	ch, err := d2.WaitTask(context.Background(), cfg.ID)
	require.NoError(t, err)
	select {
	case r := <-ch:
		require.Equal(t, 4, r.ExitCode)
		require.False(t, r.OOMKilled)
	default:
		t.Fatal("the result of a task that exited meanwhile must be there at once")
	}
}

func TestRecoverErrors(t *testing.T) {
	e := setupEnv(t)
	d1 := e.newDriver(t)
	cfg := e.taskConfig(t, waitForStop+"0")
	h := e.start(t, d1, cfg)
	d1.Shutdown()

	// Someone removed the container behind the agent's back.
	cl, ctx := e.client(t)
	c, err := cl.LoadContainer(ctx, ContainerID(cfg.ID))
	require.NoError(t, err)
	require.NoError(t, removeContainer(ctx, c))

	d2 := e.newDriver(t)
	err = d2.RecoverTask(context.Background(), h)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
	require.ErrorContains(t, err, "is gone")
	_, err = d2.WaitTask(context.Background(), cfg.ID)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)

	for name, bad := range map[string]*driver.TaskHandle{
		"nil":          nil,
		"other driver": {Driver: "exec", TaskID: cfg.ID, State: h.State},
		"bad state":    {Driver: Name, TaskID: cfg.ID, State: json.RawMessage(`{`)},
		"no container": {Driver: Name, TaskID: cfg.ID, State: json.RawMessage(`{}`)},
		"other namespace": {Driver: Name, TaskID: cfg.ID,
			State: json.RawMessage(`{"ContainerID":"x","Namespace":"elsewhere"}`)},
	} {
		require.ErrorIs(t, d2.RecoverTask(context.Background(), bad), driver.ErrInvalidHandle, name)
	}
}

// TestRecoverAfterReboot simulates a host reboot on a containerd of its
// own: containerd, the shim and the task die, containerd's state dir,
// runc's state and the shim's socket are wiped, and containerd comes back
// on its persistent root, which still holds the container. The task is
// not found; starting it again replaces the stale container.
func TestRecoverAfterReboot(t *testing.T) {
	e := setupEnv(t)
	cfg := e.taskConfig(t, waitForStop+"0") // its dir outlives the daemon
	dm := ctrdtest.StartDaemon(t)
	newDriver := func() *Driver {
		d := New(Config{Address: dm.Address(), Namespace: dm.Namespace(), Logger: testLogger(t)})
		t.Cleanup(d.Shutdown)
		return d
	}
	d1 := newDriver()
	h, err := d1.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	waitOutput(t, cfg.StdoutPath, "before\n")
	d1.Shutdown()

	// The power goes: every process dies, tmpfs state is lost.
	shimSock := dm.ShimSocket(ContainerID(cfg.ID))
	require.FileExists(t, shimSock)
	require.NoError(t, dm.WipeState())
	require.Error(t, syscall.Kill(h.Pid, 0), "the task must be dead and reaped")
	require.NoFileExists(t, shimSock)
	require.NoError(t, dm.Start())
	require.Equal(t, []string{ContainerID(cfg.ID)}, dm.Containers(t), "the root keeps the container")

	d2 := newDriver()
	err = d2.RecoverTask(context.Background(), h)
	require.ErrorIs(t, err, driver.ErrTaskNotFound)
	require.ErrorContains(t, err, "has no task")

	cfg.Config["args"] = []any{"-c", "echo again"}
	_, err = d2.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, result(t, d2, cfg.ID).Successful())
	waitOutput(t, cfg.StdoutPath, "before\nagain\n")
}
