package containerd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// Fingerprint implements driver.Driver: the driver is detected when
// containerd answers on its socket.
func (d *Driver) Fingerprint(ctx context.Context) driver.Fingerprint {
	ctx, cl, err := d.conn(ctx)
	if err != nil {
		return driver.Fingerprint{HealthDescription: err.Error()}
	}
	// Dialing a missing socket would retry until the timeout.
	if _, err := os.Stat(strings.TrimPrefix(d.cfg.Address, "unix://")); err != nil {
		return driver.Fingerprint{HealthDescription: fmt.Sprintf("%v: %v", ErrUnavailable, err)}
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.RequestTimeout)
	defer cancel()
	v, err := cl.Version(ctx)
	if err != nil {
		return driver.Fingerprint{HealthDescription: fmt.Sprintf("%v: %s: %v", ErrUnavailable, d.cfg.Address, err)}
	}
	return driver.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver." + Name: "1", "driver." + Name + ".version": v.Version}}
}

// StopTask implements driver.Driver: the signal goes to the container's
// main process (as docker stop does; it is pid 1 of the container and
// owns the rest), SIGKILL to every process of the container after timeout.
func (d *Driver) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	return d.tasks.Stop(ctx, taskID, timeout, signal, procs{d})
}

// DestroyTask implements driver.Driver: it deletes the task, its
// container and the container's snapshot.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.tasks.Halt(ctx, taskID, force, procs{d})
	if err != nil {
		return err
	}
	ctx, _, err = d.conn(ctx)
	if err != nil {
		return err
	}
	if err := deleteContainer(ctx, t.Data.container, t.Data.task); err != nil {
		return fmt.Errorf("containerd: %s: %w", taskID, err)
	}
	d.tasks.Remove(t)
	d.log.Info("task destroyed", "task", taskID, "container", t.Data.state.ContainerID)
	return nil
}

// SignalTask implements driver.Driver: the signal goes to the container's
// main process.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	return d.tasks.Signal(ctx, taskID, signal, procs{d})
}

// platform holds, on Linux, where the Driver has its own host methods,
// its tasks' last usage samples (stats_linux.go).
type platform struct{ samples *lastSamples }

func newPlatform() platform {
	return platform{samples: &lastSamples{last: map[string]*cgroups.Stats{}}}
}

// procs signals the processes of the driver's containers: StopTask's and
// SignalTask's signals go to the main process, the kill to all of them.
type procs struct{ d *Driver }

var _ driver.Processes[taskData] = procs{}

func (p procs) Stop(ctx context.Context, t *task, sig syscall.Signal) error {
	return p.kill(ctx, t, sig)
}

func (p procs) Signal(ctx context.Context, t *task, sig syscall.Signal) error {
	return p.kill(ctx, t, sig)
}

func (p procs) Kill(ctx context.Context, t *task) error {
	return p.kill(ctx, t, syscall.SIGKILL, client.WithKillAll)
}

// kill sends sig through containerd; a task it no longer has is no error.
func (p procs) kill(ctx context.Context, t *task, sig syscall.Signal, opts ...client.KillOpts) error {
	ctx, _, err := p.d.conn(ctx)
	if err != nil {
		return err
	}
	if err := t.Data.task.Kill(ctx, sig, opts...); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd: %s: %w", t.ID, err)
	}
	return nil
}

// deleteContainer deletes an exited task (tsk may be nil), its container
// and the container's snapshot; what is gone already is no error.
func deleteContainer(ctx context.Context, ctr client.Container, tsk client.Task) error {
	if tsk != nil {
		if _, err := tsk.Delete(ctx); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("deleting task: %w", err)
		}
	}
	if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("deleting container: %w", err)
	}
	return nil
}
