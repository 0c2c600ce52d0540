package device

import (
	"context"
	"fmt"
	"maps"

	"github.com/troupe-dev/troupe/messages"
)

// Plugin finds the devices of one vendor on this host and prepares them
// for tasks. Implementations are safe for concurrent use; every method may
// block on the host, so callers run them in a worker.
type Plugin interface {
	// Name identifies the plugin ("nvidia"); it is unique in a Manager.
	Name() string
	// Fingerprint lists the host's devices in groups of one vendor, type
	// and model, instances in a stable order. A plugin whose library or
	// hardware is missing returns no groups and no error; an instance that
	// cannot be queried is reported with Healthy false and the reason in
	// HealthDescription. An error means the plugin could not enumerate its
	// devices at all.
	Fingerprint(ctx context.Context) ([]*messages.NodeDeviceResource, error)
	// Reserve returns what a task needs to use the instances with these
	// IDs. It fails with ErrNoInstances for an empty list and with an error
	// wrapping ErrUnknownInstance, naming the ID, for an instance the
	// plugin does not have. Reserve does not check health: the scheduler
	// only hands out healthy instances.
	Reserve(ids []string) (*Reservation, error)
	// Stats samples the usage of every instance, keyed by instance ID. A
	// value the hardware does not report is left out.
	Stats(ctx context.Context) (map[string]*InstanceStats, error)
}

// Watcher is implemented by plugins that learn about health changes
// between fingerprints (NVIDIA XID errors, for example).
type Watcher interface {
	// Watch blocks until ctx is done and then returns nil, calling
	// onChange (from its own goroutine) whenever the next Fingerprint
	// would report a different health; the caller then fingerprints
	// again. It returns early with an error wrapping ErrWatchUnsupported
	// when the plugin cannot watch, or another error when watching broke.
	Watch(ctx context.Context, onChange func()) error
}

// Reservation is what a task needs to use some device instances.
type Reservation struct {
	// Envs are added to the task's environment
	// (NVIDIA_VISIBLE_DEVICES=GPU-…).
	Envs map[string]string
	// IsolatedEnvs replace or add to Envs for a task isolated to Devices
	// (a container that holds only these device nodes), where a vendor
	// library numbers the devices from 0 (CUDA_VISIBLE_DEVICES=0,1).
	IsolatedEnvs map[string]string
	// Devices are the device nodes the task must be allowed to open: an
	// isolating driver creates them in the container and allows them in
	// the device cgroup. A node may be missing on the host (a kernel
	// module not loaded yet); drivers skip those.
	Devices []DeviceNode
	// Mounts are files or directories to bind into the task's root
	// (driver libraries, for example).
	Mounts []Mount
}

// DeviceNode is a device file that a task needs.
type DeviceNode struct {
	HostPath      string // "/dev/nvidia3"
	ContainerPath string // where the task sees it, usually HostPath
	Permissions   string // cgroup device permissions: "rwm"
}

// Mount is a bind mount that a task needs.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// InstanceStats is one sample of an instance's usage. The unit is part of
// each name ("memory_used_mib", "temperature_c"); plugins document theirs.
type InstanceStats struct {
	Values map[string]float64
	// Summary, when set, is the one figure that tells most about the
	// instance (a GPU's memory used of its total); the plugin picks it.
	Summary *StatSummary
}

// StatSummary is an instance's headline figure: Value, or Value of Total
// when Total is set, in Unit.
type StatSummary struct {
	Desc  string
	Unit  string
	Value float64
	Total float64
}

// GroupID names a device group as vendor/type/name, the way job device
// requests and the scheduler refer to it: "nvidia/gpu/NVIDIA H100 80GB HBM3".
func GroupID(g *messages.NodeDeviceResource) string {
	return g.GetVendor() + "/" + g.GetType() + "/" + g.GetName()
}

// merge adds o to r: environment variables must agree, device nodes and
// mounts are kept once per container path.
func (r *Reservation) merge(o *Reservation) error {
	if o == nil {
		return nil
	}
	var err error
	if r.Envs, err = mergeEnvs(r.Envs, o.Envs); err != nil {
		return err
	}
	if r.IsolatedEnvs, err = mergeEnvs(r.IsolatedEnvs, o.IsolatedEnvs); err != nil {
		return err
	}
	for _, d := range o.Devices {
		dup, err := seen(r.Devices, d.ContainerPath, d.HostPath, func(n DeviceNode) (string, string) { return n.ContainerPath, n.HostPath })
		if err != nil {
			return err
		}
		if !dup {
			r.Devices = append(r.Devices, d)
		}
	}
	for _, m := range o.Mounts {
		dup, err := seen(r.Mounts, m.ContainerPath, m.HostPath, func(n Mount) (string, string) { return n.ContainerPath, n.HostPath })
		if err != nil {
			return err
		}
		if !dup {
			r.Mounts = append(r.Mounts, m)
		}
	}
	return nil
}

// mergeEnvs adds o to env (made when nil and o has variables); a
// variable both set to different values is a conflict.
func mergeEnvs(env, o map[string]string) (map[string]string, error) {
	for k, v := range o {
		if old, ok := env[k]; ok && old != v {
			return env, fmt.Errorf("%w: %s is %q and %q", ErrReservationConflict, k, old, v)
		}
	}
	if env == nil && len(o) > 0 {
		env = map[string]string{}
	}
	maps.Copy(env, o)
	return env, nil
}

// seen reports whether list already holds containerPath, and fails when it
// is bound to another host path there.
func seen[T any](list []T, containerPath, hostPath string, paths func(T) (string, string)) (bool, error) {
	for _, e := range list {
		c, h := paths(e)
		if c != containerPath {
			continue
		}
		if h != hostPath {
			return false, fmt.Errorf("%w: %s is bound to %s and %s", ErrReservationConflict, c, h, hostPath)
		}
		return true, nil
	}
	return false, nil
}

// Dedupe returns ids without empty strings or repeats, in their order.
func Dedupe(ids []string) []string {
	out := make([]string, 0, len(ids))
	have := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id != "" && !have[id] {
			have[id] = true
			out = append(out, id)
		}
	}
	return out
}
