package containerd

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// TaskDirTarget is where a task's TaskDir is bind-mounted in its
// container, as Nomad's task "local" dir.
const TaskDirTarget = "/local"

// Container labels that tie a container to its task.
const (
	LabelTaskID  = "troupe.task_id"
	LabelAllocID = "troupe.alloc_id"
	LabelTask    = "troupe.task"
)

// containerOpts builds the container: a fresh snapshot of img keyed by the
// container id, and the OCI spec of the task.
func (d *Driver) containerOpts(img client.Image, cid string, s *taskSpec, cfg *driver.TaskConfig) []client.NewContainerOpts {
	return []client.NewContainerOpts{
		client.WithImage(img),
		client.WithSnapshotter(d.cfg.Snapshotter),
		client.WithNewSnapshot(cid, img),
		client.WithRuntime(d.cfg.Runtime, nil),
		client.WithContainerLabels(map[string]string{
			LabelTaskID: cfg.ID, LabelAllocID: cfg.AllocID, LabelTask: cfg.TaskName}),
		client.WithNewSpec(specOpts(img, s, cfg)...),
	}
}

// specOpts turns the task into OCI spec options, applied in order on top
// of containerd's defaults and the image's config.
func specOpts(img client.Image, s *taskSpec, cfg *driver.TaskConfig) []oci.SpecOpts {
	var opts []oci.SpecOpts
	switch {
	case s.Command != "":
		opts = append(opts, oci.WithImageConfig(img),
			oci.WithProcessArgs(append([]string{s.Command}, s.Args...)...))
	case len(s.Args) > 0:
		opts = append(opts, oci.WithImageConfigArgs(img, s.Args)) // entrypoint + args
	default:
		opts = append(opts, oci.WithImageConfig(img))
	}
	if len(cfg.Env) > 0 {
		opts = append(opts, oci.WithEnv(envList(cfg.Env)))
	}
	if s.WorkDir != "" {
		opts = append(opts, oci.WithProcessCwd(s.WorkDir))
	}
	if cfg.User != "" {
		opts = append(opts, oci.WithUser(cfg.User))
	}
	if mounts := taskMounts(s, cfg); len(mounts) > 0 {
		opts = append(opts, oci.WithMounts(mounts))
	}
	opts = append(opts, networkOpts(s)...)
	opts = append(opts, resourceOpts(cfg)...)
	if s.Privileged {
		opts = append(opts, oci.WithPrivileged, oci.WithAllDevicesAllowed, oci.WithHostDevices)
	}
	for _, dev := range s.Devices {
		opts = append(opts, oci.WithDevices(dev.Path, dev.ContainerPath, dev.Permissions))
	}
	return opts
}

// taskMounts is the task dir at TaskDirTarget (with Isolation, Nomad's
// layout: the task dir's local at /local, the allocation's shared dir at
// /alloc, a tmpfs at /secrets), then the task's mounts.
func taskMounts(s *taskSpec, cfg *driver.TaskConfig) []specs.Mount {
	var out []specs.Mount
	if iso := cfg.Isolation; iso != nil && cfg.TaskDir != "" {
		out = append(out,
			specs.Mount{Type: "bind", Source: filepath.Join(cfg.TaskDir, "local"), Destination: driver.TaskLocalDir,
				Options: []string{"rbind", "rw"}},
			specs.Mount{Type: "bind", Source: iso.AllocDir, Destination: driver.TaskAllocDir, Options: []string{"rbind", "rw"}},
			specs.Mount{Type: "tmpfs", Source: "tmpfs", Destination: driver.TaskSecretsDir,
				Options: []string{"nosuid", "nodev", "noexec", "mode=0700", "size=1m"}})
	} else if cfg.TaskDir != "" {
		out = append(out, specs.Mount{Type: "bind", Source: cfg.TaskDir, Destination: TaskDirTarget,
			Options: []string{"rbind", "rw"}})
	}
	return append(out, s.Mounts...)
}

// networkOpts joins the given network namespace, shares the host's, or
// keeps containerd's default private namespace ("none").
func networkOpts(s *taskSpec) []oci.SpecOpts {
	switch {
	case s.NetnsPath != "":
		return []oci.SpecOpts{oci.WithLinuxNamespace(specs.LinuxNamespace{
			Type: specs.NetworkNamespace, Path: s.NetnsPath})}
	case s.NetworkMode == NetworkHost:
		return []oci.SpecOpts{oci.WithHostNamespace(specs.NetworkNamespace),
			oci.WithHostHostsFile, oci.WithHostResolvconf}
	}
	return nil
}

// resourceOpts sets the memory limit and reservation, the CPU shares and
// the cores the scheduler reserved for the task (its cpuset).
func resourceOpts(cfg *driver.TaskConfig) []oci.SpecOpts {
	var opts []oci.SpecOpts
	limit, reservation := memoryLimits(cfg)
	if limit > 0 {
		opts = append(opts, oci.WithMemoryLimit(uint64(limit)))
	}
	if reservation > 0 {
		opts = append(opts, withMemoryReservation(reservation))
	}
	if shares := cpuShares(cfg.CPU); shares > 0 {
		opts = append(opts, oci.WithCPUShares(shares))
	}
	if len(cfg.ReservedCores) > 0 {
		opts = append(opts, oci.WithCPUs(cpuList(cfg.ReservedCores)))
	}
	return opts
}

// cpuList is cores as a kernel CPU list ("0,2").
func cpuList(cores []int) string {
	parts := make([]string, len(cores))
	for i, c := range cores {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

func withMemoryReservation(bytes int64) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		if s.Linux.Resources == nil {
			s.Linux.Resources = &specs.LinuxResources{}
		}
		if s.Linux.Resources.Memory == nil {
			s.Linux.Resources.Memory = &specs.LinuxMemory{}
		}
		s.Linux.Resources.Memory.Reservation = &bytes
		return nil
	}
}
