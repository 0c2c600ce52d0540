package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/alloc"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/server"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/artifact"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

func (a *Agent) startClient() error {
	var err error
	a.db, err = clientstate.Open(filepath.Join(a.dataDir, "client", "state.db"), a.log)
	if err != nil {
		return err
	}
	id := a.local.LocalNodeID
	name := a.cfg.NodeName
	if name == "" {
		name, _ = os.Hostname()
	}
	a.node = &messages.Node{
		ID: id, SecretID: a.nodeSecret, Name: name, Datacenter: a.cfg.Datacenter, Region: a.cfg.Region,
		NodeClass: a.cfg.NodeClass, NodePool: state.PoolOrDefault(a.cfg.NodePool), Meta: a.cfg.Meta,
		HTTPAddr: a.cfg.HTTPAddr, Status: "initializing",
		Version: node.Version, HostVolumes: a.cfg.HostVolumes,
	}
	// The host's own attributes now (the drivers' come with the first
	// registration): allocations restored before it interpolate them.
	// Only the attributes: each registration measures the resources anew.
	host := &messages.Node{}
	node.Fingerprint(context.Background(), host, nil, a.clock.Now())
	a.node.Attributes = host.Attributes
	if err := a.startRuntimes(); err != nil {
		return err
	}
	stored, err := a.db.Allocs()
	if err != nil {
		return fmt.Errorf("agent: read the client state: %w", err)
	}
	a.plugins = node.NewPluginTable()
	// One usage actor owns the host's staged-volume users (rebuilt from
	// the state file) and serialises the node-side work on each.
	usage, err := a.sys.Root.SpawnNamed(a.sys.Props("csi-usage",
		alloc.NewUsageActor(alloc.NewUsageFromState(stored), a.log.With("actor", "csi-usage"))), "client/csi-usage")
	if err != nil {
		return fmt.Errorf("agent: start the csi usage actor: %w", err)
	}
	a.csi = &alloc.CSIConfig{
		Claimer: a.conn, NodePlugin: a.plugins.Node,
		Dial: func(ctx context.Context, socket string) (csi.Client, error) { return csi.Dial(ctx, socket) },
		Root: filepath.Join(a.dataDir, "csi"), Mounter: alloc.HostMounter{},
		Retry: a.cfg.VolumeRetry, ClaimRetry: a.cfg.VolumeRetry, Usage: usage,
	}
	spec := &node.ClientSpec{
		Node: a.node, Server: a.conn, Drivers: a.drivers, DB: a.db, Clock: a.clock,
		AllocProps: a.allocProps, BatchInterval: a.cfg.ClientBatch, Logger: a.log.With("actor", "client"),
		ReservedCores: a.cfg.ReservedCores,
		PluginSocket: func(allocID, task, mountDir string) string {
			return alloc.PluginSocketPath(a.AllocDir(), allocID, task, mountDir)
		},
		ProbeCSI: probeCSI, PluginProbeInterval: a.cfg.PluginProbeInterval, Registry: a.sys.Registry,
		Plugins: a.plugins, RunController: csi.RunController,
	}
	if a.devices != nil { // a nil *device.Manager must stay a nil interface
		spec.Devices = a.devices
	}
	a.clientPID, err = a.sys.Root.SpawnNamed(a.sys.Props("client", node.NewClient(spec),
		actor.WithSupervisor(actors.DefaultSupervision.Strategy())), server.ClientActorName)
	if err != nil {
		return fmt.Errorf("agent: spawn client actor: %w", err)
	}
	a.hostCPU = newCPUSampler("/proc/stat")
	_ = a.hostCPU.sample() // the first interval's baseline
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		a.sampleHost()
	}()
	go func() {
		defer a.wg.Done()
		a.cleanupRuntimes(a.knownAlloc)
		a.sweepNetwork(a.knownAlloc)
	}()
	return nil
}

// knownAlloc reports whether the client state file has the allocation.
// The file's writes are queued: before answering no, it waits for those
// queued so far, so that an allocation whose actor has just stored it
// (before setting up its network) is never taken for a gone one.
func (a *Agent) knownAlloc(id string) bool {
	if sa, err := a.db.Alloc(id); err == nil && sa != nil {
		return true
	}
	a.db.Flush()
	sa, err := a.db.Alloc(id)
	return err == nil && sa != nil
}

// allocProps builds the props of one alloc actor.
func (a *Agent) allocProps(al *messages.Allocation, n *messages.Node) *actor.Props {
	spec := &alloc.Spec{
		Alloc: al, Drivers: a.drivers, DB: a.db, Clock: a.clock, AllocRoot: a.AllocDir(),
		Registry: a.sys.Registry, Logger: a.log.With("actor", "alloc"), CSI: a.csi, Node: n,
		Artifacts: &artifact.Fetcher{Limits: a.cfg.Artifacts},
		Vars:      a.conn,
		// Workload identities, signed by the servers (identity.go).
		Identities: a.conn,
	}
	if a.network != nil { // a nil *cni.Network must stay a nil interface
		spec.Network = a.network
	}
	if a.devices != nil {
		spec.Devices = a.devices
	}
	return a.sys.Props("alloc", alloc.New(spec), actor.WithSupervisor(actors.DefaultSupervision.Strategy()))
}

// TaskLogPath names a task's stdout or stderr log: the base of its rotated
// files (<alloc>/alloc/logs/<task>.stdout.0, .1, ...; runtime/logrotate, as
// Nomad names them), or the one file a driver that does not rotate writes
// (the base itself). Names that
// would leave the allocation dir are refused, and so is a log file that is
// not a regular file (a task that replaced its stdout by a symlink to
// /etc/shadow does not get the agent to read that).
func (a *Agent) TaskLogPath(allocID, task, logType string) (string, error) {
	if a.db == nil {
		return "", ErrNotClient
	}
	if logType != "stdout" && logType != "stderr" {
		return "", fmt.Errorf("agent: log type %s: want stdout or stderr", safepath.Quote(logType))
	}
	if err := safepath.CheckName("allocation ID", allocID); err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrUnknownAlloc, safepath.Quote(allocID), err)
	}
	unknownTask := func(err error) error {
		return fmt.Errorf("%w %s in allocation %s: %w", ErrUnknownTask, safepath.Quote(task), allocID, err)
	}
	if err := safepath.CheckName("task", task); err != nil {
		return "", unknownTask(err)
	}
	if sa, err := a.db.Alloc(allocID); err == nil && sa != nil && !slices.Contains(alloc.Tasks(sa.Alloc), task) {
		return "", unknownTask(errors.New("the allocation has no such task"))
	}
	root := a.AllocDir()
	dir := alloc.TaskDir(root, allocID, task)
	if fi, err := safepath.Lstat(root, filepath.Dir(dir)); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w %s: no allocation directory on this client", ErrUnknownAlloc, safepath.Quote(allocID))
	}
	if fi, err := safepath.Lstat(root, dir); err != nil || !fi.IsDir() {
		return "", unknownTask(errors.New("no task directory"))
	}
	path := alloc.LogPath(root, allocID, task, logType)
	fi, err := safepath.Lstat(root, path)
	if err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("agent: %s log of task %s in allocation %s is not a regular file", logType, safepath.Quote(task), allocID)
	}
	return path, nil
}

// stopAllTasks stops every task this client runs, in parallel (a -dev
// agent does this on exit: its state dies with it).
func (a *Agent) stopAllTasks() {
	all, err := a.db.Allocs()
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for _, sa := range all {
		// The allocations' postrun never runs: remove the socket stand-in
		// dirs of their CSI plugin tasks here.
		_ = (&alloc.AllocDirHook{Root: a.AllocDir()}).Postrun(context.Background(), sa.Alloc)
		for _, raw := range sa.Handles {
			h := &driver.TaskHandle{}
			if json.Unmarshal(raw, h) != nil {
				continue
			}
			d, ok := a.drivers[h.Driver]
			if !ok {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if d.RecoverTask(ctx, h) == nil {
					_ = d.StopTask(ctx, h.TaskID, 3*time.Second, "SIGTERM")
					_ = d.DestroyTask(ctx, h.TaskID, true) // and its cgroup
				}
			}()
		}
	}
	wg.Wait()
}

// AllocForLogs finds an allocation whose logs are asked for: in this
// client's state when it runs here, else in the replicated state, pointing
// at the agent of the node that runs it.
func (a *Agent) AllocForLogs(allocID string) (*messages.Allocation, *messages.Job, string, error) {
	if a.db != nil {
		if sa, err := a.db.Alloc(allocID); err == nil && sa != nil {
			return sa.Alloc, sa.Alloc.GetJob(), "", nil
		}
	}
	if a.store == nil {
		return nil, nil, "", fmt.Errorf("%w: %q", ErrUnknownAlloc, allocID)
	}
	snap := a.store.Snapshot()
	al := snap.AllocByID(allocID)
	if al == nil {
		return nil, nil, "", fmt.Errorf("alloc not found: %q", allocID)
	}
	job := snap.JobVersion(al.GetNamespace(), al.GetJobID(), al.GetJobVersion())
	if a.node != nil && al.GetNodeID() == a.node.GetID() {
		return al, job, "", nil
	}
	n := snap.NodeByID(al.GetNodeID())
	if n.GetHTTPAddr() == "" {
		return nil, nil, "", fmt.Errorf("%w: node %q of allocation %q has no HTTP address", ErrUnknownAlloc, al.GetNodeID(), allocID)
	}
	return al, job, n.GetHTTPAddr(), nil
}
