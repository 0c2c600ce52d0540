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
	sig, err := driver.StopSignal(signal)
	if err != nil {
		return err
	}
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	if t.exited() {
		return nil
	}
	ctx, _, err = d.conn(ctx)
	if err != nil {
		return err
	}
	if err := t.task.Kill(ctx, sig); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd: %s: %w", taskID, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
	}
	d.log.Info("task ignored stop signal, killing it", "task", taskID, "signal", sig, "timeout", timeout)
	return d.kill(ctx, t)
}

// DestroyTask implements driver.Driver: it deletes the task, its
// container and the container's snapshot.
func (d *Driver) DestroyTask(ctx context.Context, taskID string, force bool) error {
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	ctx, _, err = d.conn(ctx)
	if err != nil {
		return err
	}
	if !t.exited() {
		if !force {
			return fmt.Errorf("%w: %s", driver.ErrTaskRunning, taskID)
		}
		if err := d.kill(ctx, t); err != nil {
			return err
		}
	}
	if err := deleteContainer(ctx, t.container, t.task); err != nil {
		return fmt.Errorf("containerd: %s: %w", taskID, err)
	}
	d.forget(t)
	d.log.Info("task destroyed", "task", taskID, "container", t.state.ContainerID)
	return nil
}

// SignalTask implements driver.Driver: the signal goes to the container's
// main process.
func (d *Driver) SignalTask(ctx context.Context, taskID string, signal string) error {
	sig, err := driver.ParseSignal(signal)
	if err != nil {
		return err
	}
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	if t.exited() {
		return fmt.Errorf("%w: %s has exited", driver.ErrTaskNotFound, taskID)
	}
	ctx, _, err = d.conn(ctx)
	if err != nil {
		return err
	}
	if err := t.task.Kill(ctx, sig); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd: %s: %w", taskID, err)
	}
	return nil
}

// kill SIGKILLs every process of t's container and waits until the task
// is gone.
func (d *Driver) kill(ctx context.Context, t *task) error {
	if err := t.task.Kill(ctx, syscall.SIGKILL, client.WithKillAll); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd: %s: %w", t.id, err)
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
