package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/device/nvidia"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/containerd"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
	"github.com/troupe-dev/troupe/runtime/driver/java"
	"github.com/troupe-dev/troupe/runtime/driver/qemu"
)

// startRuntimes builds the task drivers and the bridge network of a
// client. A host without containerd or without CNI plugins still runs
// exec tasks: the containerd driver fingerprints as undetected and
// bridge networking is off, each said once in the log. A configuration
// that is wrong (an invalid subnet) stops the agent with the reason.
func (a *Agent) startRuntimes() error {
	a.ctrd = containerd.New(containerd.Config{Address: a.cfg.ContainerdAddress, Namespace: a.cfg.ContainerdNamespace,
		Logger: a.log.With("driver", "containerd")})
	execCfg := exec.Config{ExecutorPath: a.cfg.ExecutorPath, ExecutorArgs: a.cfg.ExecutorArgs,
		ExecutorEnv: a.cfg.ExecutorEnv, ChrootEnv: a.cfg.ChrootEnv, UserDenylist: a.cfg.UserDenylist,
		CgroupParent: a.cfg.CgroupParent, PidsLimit: a.cfg.PidsLimit, Logger: a.log}
	execDrv := exec.New(execCfg)
	// java and raw_exec tasks run through exec drivers of their own, which
	// share the exec driver's cgroups: one pool of cores for all three
	execCfg.CgroupsOf = execDrv
	rawCfg := execCfg
	rawCfg.Raw, rawCfg.Disabled = true, !a.cfg.RawExec()
	a.drivers = map[string]driver.Driver{
		exec.Name:       execDrv,
		exec.RawName:    exec.New(rawCfg),
		containerd.Name: a.ctrd,
		qemu.Name: qemu.New(qemu.Config{ImagePaths: a.cfg.QemuImagePaths, CgroupParent: a.cfg.CgroupParent,
			PidsLimit: a.cfg.PidsLimit, Logger: a.log}),
		java.Name: java.New(java.Config{JavaHome: a.cfg.JavaHome, ChrootEnv: a.cfg.ChrootEnv, Logger: a.log},
			exec.New(execCfg)), // in exec's isolation
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if fp := a.ctrd.Fingerprint(ctx); !fp.Detected || !fp.Healthy {
		a.log.Info("containerd driver unavailable: containerd tasks will not be placed here", "reason", fp.HealthDescription)
	}
	plugins := a.cfg.DevicePlugins
	if plugins == nil {
		plugins = []device.Plugin{nvidia.New(nvidia.Config{Logger: a.log.With("devices", "nvidia")})}
	}
	devices, err := device.NewManager(a.log.With("component", "devices"), plugins...)
	if err != nil {
		return fmt.Errorf("agent: devices: %w", err)
	}
	a.devices = devices
	netCfg := cni.Config{Name: a.cfg.CNINetwork, PluginDirs: a.cfg.CNIPluginDirs, Bridge: a.cfg.BridgeName, Subnet: a.cfg.BridgeSubnet,
		IPAMDataDir: a.cfg.CNIStateDir, NetnsDir: a.cfg.NetnsDir, Logger: a.log.With("component", "cni")}
	n, err := cni.New(netCfg)
	switch {
	case errors.Is(err, cni.ErrPluginNotFound):
		a.log.Info("bridge networking unavailable: no CNI plugins", "reason", err)
	case err != nil:
		return fmt.Errorf("agent: bridge network: %w", err)
	default:
		a.network = n
	}
	return nil
}

// cleanupRuntimes removes what stopped allocations left in containerd and
// in the bridge network (containers, snapshots, netns, IPAM reservations,
// firewall rules) and in the cgroups (sweepCgroups) once the client
// restored its allocations.
func (a *Agent) cleanupRuntimes(live func(allocID string) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a.sweepCgroups(live)
	if a.network != nil {
		if err := a.network.GC(ctx, live); err != nil {
			a.log.Warn("bridge network GC", "error", err)
		}
	}
	if a.ctrd != nil {
		keep := a.liveContainers()
		if err := a.ctrd.Cleanup(ctx, func(containerID string) bool { return keep[containerID] }); err != nil {
			a.log.Debug("containerd cleanup", "error", err)
		}
	}
}

// sweepNetwork runs the bridge network's GC every NetworkGCInterval
// until the agent stops: what an allocation's teardown could not remove
// (it gave up, or the allocation was forgotten meanwhile) does not wait
// for the next agent start. The allocations in the client state file are
// live; each is written there before its network is set up and removed
// only after its network was released. Containers are cleaned up at start
// only: one being created has no stored handle yet.
func (a *Agent) sweepNetwork(live func(allocID string) bool) {
	if a.network == nil {
		return
	}
	every := a.cfg.NetworkGCInterval
	if every <= 0 {
		every = DefaultNetworkGCInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // a stopping agent does not wait for a sweep
		select {
		case <-a.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		fire := make(chan struct{})
		t := a.clock.AfterFunc(every, func() { close(fire) })
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-fire:
		}
		gc, done := context.WithTimeout(ctx, time.Minute)
		if err := a.network.GC(gc, live); err != nil && gc.Err() == nil {
			a.log.Warn("bridge network GC", "error", err)
		}
		done()
	}
}

// liveContainers are the container IDs of the tasks with a stored handle
// in the client state file: the allocations this client still knows.
func (a *Agent) liveContainers() map[string]bool {
	out := map[string]bool{}
	all, err := a.db.Allocs()
	if err != nil {
		return out
	}
	for _, sa := range all {
		for task := range sa.Handles {
			out[containerd.ContainerID(sa.Alloc.GetID()+"/"+task)] = true
		}
	}
	return out
}
