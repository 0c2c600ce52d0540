package qemu

import (
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/runtime/cgroups"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// cgroups returns the driver's cgroup state, set up on first use.
func (d *Driver) cgroups() *vmCgroups {
	c := d.cg
	c.once.Do(func() {
		m, err := cgroups.New(d.cfg.CgroupParent)
		if err != nil {
			d.log.Warn("VMs run without cgroups: no memory limit, no usage", "err", err)
			return
		}
		c.mgr = m
	})
	return c
}

// vmResources are a VM's limits: the task's (cgroups.TaskResources) with
// room for qemu itself on top of the guest's memory.
func vmResources(cfg *driver.TaskConfig, guestMB int64, pids int64) cgroups.Resources {
	r := cgroups.TaskResources(cfg, "", pids)
	r.MemoryMax = max(r.MemoryMax, guestMB<<20) + memoryOverheadMB<<20
	return r
}

// createGroup makes the task's group (a previous run's is replaced); nil
// when the host has no cgroups.
func (d *Driver) createGroup(cfg *driver.TaskConfig, guestMB int64) (cgroups.Group, error) {
	c := d.cgroups()
	if c.mgr == nil {
		return nil, nil
	}
	c.samples.Forget(cfg.ID)
	g, err := c.mgr.CreateTask(cfg.AllocID, cfg.TaskName, vmResources(cfg, guestMB, d.cfg.PidsLimit))
	if err != nil {
		return nil, fmt.Errorf("qemu: %s: %w", cfg.ID, err)
	}
	return g, nil
}

// group loads a task's group; nil when it has none or it is gone.
func (d *Driver) group(t *task) cgroups.Group { return d.cgroups().mgr.Existing(t.Data.Cgroup) }

// killGroup SIGKILLs whatever runs in t's group (qemu, its shim, any
// helper it started).
func (d *Driver) killGroup(t *task) error {
	if g := d.group(t); g != nil {
		return g.Kill()
	}
	return nil
}

// removeGroup kills what is left in t's group and removes it.
func (d *Driver) removeGroup(t *task) error {
	c := d.cgroups()
	c.samples.Forget(t.ID)
	if g := d.group(t); g != nil {
		return g.Delete()
	}
	return nil
}

var _ driver.Statser = (*Driver)(nil)

// TaskStats implements driver.Statser from the VM's cgroup: CPU over
// the time since the previous sample (the first: since the VM started).
func (d *Driver) TaskStats(_ context.Context, taskID string) (*driver.TaskUsage, error) {
	t, err := d.tasks.Get(taskID)
	if err != nil {
		return nil, err
	}
	if t.Exited() {
		return nil, fmt.Errorf("%w: %s has exited", driver.ErrTaskNotFound, taskID)
	}
	g := d.group(t)
	if g == nil {
		return nil, fmt.Errorf("%w: %s runs without a cgroup", driver.ErrStatsNotSupported, taskID)
	}
	s, err := g.Stats()
	if err != nil {
		return nil, fmt.Errorf("qemu: %s: %w", taskID, err)
	}
	return d.cgroups().samples.Usage(taskID, s, t.Handle.StartedAt), nil
}
