package containerd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// StartTask implements driver.Driver: it gets the image, removes what an
// earlier run of the same task left behind, creates the container and its
// task, and returns once the task runs.
func (d *Driver) StartTask(ctx context.Context, cfg *driver.TaskConfig) (*driver.TaskHandle, error) {
	if err := checkPaths(cfg); err != nil {
		return nil, err
	}
	s, err := parseTaskSpec(cfg)
	if err != nil {
		return nil, err
	}
	if err := d.tasks.Reserve(cfg.ID); err != nil {
		return nil, err
	}
	defer d.tasks.Release(cfg.ID)
	ctx, cl, err := d.conn(ctx)
	if err != nil {
		return nil, err
	}
	cid := ContainerID(cfg.ID)
	if err := d.removeStale(ctx, cl, cid, cfg.ID); err != nil {
		return nil, err
	}
	img, err := d.image(ctx, cl, s)
	if err != nil {
		return nil, err
	}
	taskIO, err := d.taskIO(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: log files: %w", ErrTaskStart, cfg.ID, err)
	}
	ctr, tsk, err := d.create(ctx, cl, img, cid, s, cfg, taskIO)
	if err != nil {
		return nil, err
	}
	st := handleState{ContainerID: cid, Namespace: d.cfg.Namespace, Image: img.Name()}
	t := newTask(cfg.ID, st, ctr, tsk)
	state, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	t.Handle = driver.TaskHandle{Driver: Name, TaskID: cfg.ID, Pid: int(tsk.Pid()),
		StartedAt: time.Now(), State: state}
	if !d.watch(t) {
		d.removeFailed(ctx, ctr, tsk)
		return nil, driver.ErrShutdown
	}
	d.tasks.Add(t)
	d.log.Info("task started", "task", cfg.ID, "container", cid, "pid", t.Handle.Pid, "image", st.Image)
	h := t.Handle
	return &h, nil
}

// create makes the container and starts its task; on failure it removes
// what it made, snapshot included.
func (d *Driver) create(ctx context.Context, cl *client.Client, img client.Image, cid string,
	s *taskSpec, cfg *driver.TaskConfig, taskIO cio.Creator) (client.Container, client.Task, error) {
	ctr, err := cl.NewContainer(ctx, cid, d.containerOpts(img, cid, s, cfg)...)
	if err != nil {
		if errdefs.IsAlreadyExists(err) { // another driver started it meanwhile
			return nil, nil, fmt.Errorf("%w: %s: %w", driver.ErrTaskAlreadyStarted, cfg.ID, err)
		}
		d.removeSnapshot(ctx, cl, cid)
		return nil, nil, fmt.Errorf("%w: %s: creating container: %w", ErrTaskStart, cfg.ID, err)
	}
	tsk, err := ctr.NewTask(ctx, taskIO)
	if err != nil {
		d.removeFailed(ctx, ctr, nil)
		return nil, nil, fmt.Errorf("%w: %s: creating task: %w", ErrTaskStart, cfg.ID, err)
	}
	if err := tsk.Start(ctx); err != nil {
		d.removeFailed(ctx, ctr, tsk)
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrTaskStart, cfg.ID, err)
	}
	return ctr, tsk, nil
}

// removeStale deletes a container with id cid that an earlier run left
// (its task exited, or never started), and an orphaned snapshot. A
// container whose task still runs is ErrTaskAlreadyStarted.
func (d *Driver) removeStale(ctx context.Context, cl *client.Client, cid, taskID string) error {
	ctr, err := cl.LoadContainer(ctx, cid)
	if errdefs.IsNotFound(err) {
		d.removeSnapshot(ctx, cl, cid)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: loading container %s: %w", taskID, cid, err)
	}
	tsk, err := ctr.Task(ctx, nil)
	switch {
	case err == nil:
		st, err := tsk.Status(ctx)
		if err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("%s: status of stale task: %w", taskID, err)
		}
		if err == nil && (st.Status == client.Running || st.Status == client.Paused || st.Status == client.Pausing) {
			return fmt.Errorf("%w: %s: container %s is %s", driver.ErrTaskAlreadyStarted, taskID, cid, st.Status)
		}
		if _, err := tsk.Delete(ctx, client.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("%s: deleting stale task: %w", taskID, err)
		}
	case !errdefs.IsNotFound(err):
		return fmt.Errorf("%s: loading stale task: %w", taskID, err)
	}
	if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("%s: deleting stale container: %w", taskID, err)
	}
	d.log.Info("removed stale container", "task", taskID, "container", cid)
	return nil
}

// removeFailed removes a container (and its task, when it has one) whose
// start failed. It runs even when ctx has ended.
func (d *Driver) removeFailed(ctx context.Context, ctr client.Container, tsk client.Task) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.RequestTimeout)
	defer cancel()
	if tsk != nil {
		if _, err := tsk.Delete(ctx, client.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			d.log.Warn("removing task of failed start", "container", ctr.ID(), "err", err)
		}
	}
	if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		d.log.Warn("removing container of failed start", "container", ctr.ID(), "err", err)
	}
}

// removeSnapshot removes the snapshot with key cid, if there is one.
func (d *Driver) removeSnapshot(ctx context.Context, cl *client.Client, cid string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.RequestTimeout)
	defer cancel()
	err := cl.SnapshotService(d.cfg.Snapshotter).Remove(ctx, cid)
	if err != nil && !errdefs.IsNotFound(err) {
		d.log.Warn("removing snapshot", "snapshot", cid, "err", err)
	}
}

func orDevNull(p string) string {
	if p == "" {
		return os.DevNull
	}
	return p
}

// logFiles is a cio.Creator that hands the task's log file paths to the
// shim. A path that is not a FIFO makes the shim append the stream to the
// file itself, so logs keep flowing while no agent is attached, and a
// restarted agent has nothing to re-attach.
func logFiles(stdout, stderr string) cio.Creator {
	return func(string) (cio.IO, error) {
		return &fileIO{config: cio.Config{Stdout: stdout, Stderr: stderr}}, nil
	}
}

// fileIO is a cio.IO with nothing to copy or close on the client side.
type fileIO struct{ config cio.Config }

func (f *fileIO) Config() cio.Config { return f.config }
func (f *fileIO) Cancel()            {}
func (f *fileIO) Wait()              {}
func (f *fileIO) Close() error       { return nil }
