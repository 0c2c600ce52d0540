package containerd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/errdefs"
)

// unpackKeyPrefix starts the keys of the snapshots an image unpack makes
// while it runs; Cleanup leaves them alone.
const unpackKeyPrefix = "extract-"

// Cleanup removes what stale allocations left in the driver's namespace:
// every container whose id keep rejects (its task killed and deleted, its
// snapshot removed), then every active snapshot that no container uses,
// keep rejects and no StartTask is preparing. Image layers are never
// touched. Call it once the agent knows which tasks it wants, e.g.
//
//	want := map[string]bool{containerd.ContainerID(taskID): true, ...}
//	err := d.Cleanup(ctx, func(id string) bool { return want[id] })
func (d *Driver) Cleanup(ctx context.Context, keep func(containerID string) bool) error {
	ctx, cl, err := d.conn(ctx)
	if err != nil {
		return err
	}
	ctrs, err := cl.Containers(ctx)
	if err != nil {
		return fmt.Errorf("containerd: listing containers: %w", err)
	}
	used := d.startingIDs()
	var errs []error
	for _, c := range ctrs {
		info, err := c.Info(ctx, client.WithoutRefreshedMetadata)
		if err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("container %s: %w", c.ID(), err))
			used[c.ID()] = true
			continue
		}
		if keep(c.ID()) || used[c.ID()] {
			used[info.SnapshotKey] = true
			continue
		}
		if err := removeContainer(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", c.ID(), err))
			used[info.SnapshotKey] = true
			continue
		}
		d.forgetContainer(c.ID())
		d.log.Info("removed stale container", "container", c.ID())
	}
	if err := d.removeOrphanSnapshots(ctx, cl, keep, used); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("containerd: cleanup: %w", err)
	}
	return nil
}

// removeContainer kills and deletes the container's task, if it has one,
// then deletes the container and its snapshot.
func removeContainer(ctx context.Context, c client.Container) error {
	tsk, err := c.Task(ctx, nil)
	switch {
	case err == nil:
		if _, err := tsk.Delete(ctx, client.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("deleting task: %w", err)
		}
	case !errdefs.IsNotFound(err):
		return fmt.Errorf("loading task: %w", err)
	}
	return deleteContainer(ctx, c, nil)
}

// removeOrphanSnapshots removes active snapshots that nothing uses.
func (d *Driver) removeOrphanSnapshots(ctx context.Context, cl *client.Client, keep func(string) bool,
	used map[string]bool) error {
	sn := cl.SnapshotService(d.cfg.Snapshotter)
	var orphans []string
	err := sn.Walk(ctx, func(_ context.Context, info snapshots.Info) error {
		if info.Kind == snapshots.KindActive && !used[info.Name] && !keep(info.Name) &&
			!strings.HasPrefix(info.Name, unpackKeyPrefix) {
			orphans = append(orphans, info.Name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing snapshots: %w", err)
	}
	var errs []error
	for _, key := range orphans {
		if err := sn.Remove(ctx, key); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("snapshot %s: %w", key, err))
			continue
		}
		d.log.Info("removed orphaned snapshot", "snapshot", key)
	}
	return errors.Join(errs...)
}

// startingIDs are the container ids of the tasks StartTask is starting.
func (d *Driver) startingIDs() map[string]bool {
	ids := map[string]bool{}
	for _, id := range d.tasks.Starting() {
		ids[ContainerID(id)] = true
	}
	return ids
}

// forgetContainer drops the task that ran in container cid, if the driver
// knew it; its watcher has delivered the kill's result.
func (d *Driver) forgetContainer(cid string) {
	d.tasks.RemoveIf(func(t *task) bool { return t.Data.state.ContainerID == cid })
}
