package containerd

import (
	"context"
	"fmt"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// RecoverTask implements driver.Driver: it loads the handle's container
// and task from containerd. A task that exited meanwhile recovers with its
// result ready; a container or task that containerd no longer has (after
// a host reboot, or removed by hand) is a wrapped driver.ErrTaskNotFound.
// Other errors (containerd down) are worth retrying.
func (d *Driver) RecoverTask(ctx context.Context, h *driver.TaskHandle) error {
	st, err := decodeHandle(h)
	if err != nil {
		return err
	}
	if st.Namespace != "" && st.Namespace != d.cfg.Namespace {
		return fmt.Errorf("%w: %s: namespace %q, the driver uses %q",
			driver.ErrInvalidHandle, h.TaskID, st.Namespace, d.cfg.Namespace)
	}
	st.Namespace = d.cfg.Namespace
	if known, err := d.tasks.Known(h.TaskID); known || err != nil {
		return err
	}
	ctx, cl, err := d.conn(ctx)
	if err != nil {
		return err
	}
	ctr, tsk, err := loadTask(ctx, cl, h.TaskID, st.ContainerID)
	if err != nil {
		return err
	}
	t := newTask(h.TaskID, st, ctr, tsk)
	t.Handle = *h
	status, err := tsk.Status(ctx)
	if err != nil {
		return fmt.Errorf("containerd: %s: task status: %w", h.TaskID, err)
	}
	switch status.Status {
	case client.Stopped:
		d.tasks.Finish(t, d.exitResult(ctx, t, status.ExitStatus))
	case client.Unknown: // its shim is gone: nobody can report its exit
		return fmt.Errorf("%w: %s: container %s has a task in unknown state (its shim died)",
			driver.ErrTaskNotFound, h.TaskID, st.ContainerID)
	default:
		if !d.watch(t) {
			return driver.ErrShutdown
		}
	}
	d.tasks.AddRecovered(t)
	d.log.Info("task recovered", "task", h.TaskID, "container", st.ContainerID,
		"pid", tsk.Pid(), "status", status.Status)
	return nil
}

// loadTask loads a container and its task; either gone is ErrTaskNotFound.
func loadTask(ctx context.Context, cl *client.Client, taskID, cid string) (client.Container, client.Task, error) {
	ctr, err := cl.LoadContainer(ctx, cid)
	if errdefs.IsNotFound(err) {
		return nil, nil, fmt.Errorf("%w: %s: container %s is gone", driver.ErrTaskNotFound, taskID, cid)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("containerd: %s: loading container %s: %w", taskID, cid, err)
	}
	tsk, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil, nil, fmt.Errorf("%w: %s: container %s has no task (containerd lost it, e.g. in a reboot)",
			driver.ErrTaskNotFound, taskID, cid)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("containerd: %s: loading task %s: %w", taskID, cid, err)
	}
	return ctr, tsk, nil
}
