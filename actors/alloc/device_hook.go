package alloc

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// deviceHook fails, before any task starts, an allocation whose tasks the
// scheduler gave device instances on a client without a device plugin.
// The instances themselves are reserved at every start of a task (see
// reserveDevices), so a task restarted by its restart policy gets them
// again, and a task re-attached after an agent restart needs nothing.
type deviceHook struct {
	plugin device.Plugin
}

// Name implements Hook.
func (h *deviceHook) Name() string { return "devices" }

// Prerun implements prerunHook.
func (h *deviceHook) Prerun(_ context.Context, a *messages.Allocation) error {
	if h.plugin != nil {
		return nil
	}
	for _, t := range groupOf(a).GetTasks() {
		for _, d := range a.GetAllocatedResources().GetTasks()[t.GetName()].GetDevices() {
			if len(d.GetDeviceIDs()) > 0 {
				return fmt.Errorf("%w for %s/%s (task %q)", errNoDevicePlugin, d.GetVendor(), d.GetType(), t.GetName())
			}
		}
	}
	return nil
}

// deviceIDs lists the device instances the scheduler gave a task, each
// once, in the allocation's order.
func deviceIDs(a *messages.Allocation, task string) []string {
	var ids []string
	for _, d := range a.GetAllocatedResources().GetTasks()[task].GetDevices() {
		ids = append(ids, d.GetDeviceIDs()...)
	}
	return device.Dedupe(ids)
}

// reserveDevices reserves the instances ids (none: cfg as is) and returns
// a copy of cfg that lets the task use them; it blocks on the plugin, so
// it runs in the task actor's start worker.
func reserveDevices(cfg *driver.TaskConfig, driverName string, plugin device.Plugin, ids []string) (*driver.TaskConfig, error) {
	if len(ids) == 0 {
		return cfg, nil
	}
	if plugin == nil {
		return nil, fmt.Errorf("%w for devices %s", errNoDevicePlugin, strings.Join(ids, ", "))
	}
	res, err := plugin.Reserve(ids)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDeviceReserve, err)
	}
	return withReservation(cfg, driverName, res), nil
}

// withReservation returns a copy of cfg with the reservation's variables
// in the environment (over the task's own env block). A containerd task
// sees only the reserved device nodes, so it also gets the reservation's
// IsolatedEnvs (CUDA_VISIBLE_DEVICES 0..n-1); the nodes go into its driver
// config as "devices" and the mounts as "mounts". An exec task is not
// isolated: it keeps the host's indices and device nodes.
func withReservation(cfg *driver.TaskConfig, driverName string, res *device.Reservation) *driver.TaskConfig {
	out := *cfg
	out.Env = maps.Clone(cfg.Env)
	if out.Env == nil {
		out.Env = map[string]string{}
	}
	maps.Copy(out.Env, res.Envs)
	if driverName != containerdDriver {
		return &out
	}
	maps.Copy(out.Env, res.IsolatedEnvs)
	out.Config = maps.Clone(cfg.Config)
	if out.Config == nil {
		out.Config = map[string]any{}
	}
	var nodes []any
	for _, d := range res.Devices {
		nodes = append(nodes, map[string]any{"path": d.HostPath, "container_path": d.ContainerPath, "permissions": d.Permissions})
	}
	appendList(out.Config, "devices", nodes)
	var mounts []any
	for _, m := range res.Mounts {
		mounts = append(mounts, map[string]any{"source": m.HostPath, "target": m.ContainerPath, "readonly": m.ReadOnly})
	}
	appendList(out.Config, "mounts", mounts)
	return &out
}
