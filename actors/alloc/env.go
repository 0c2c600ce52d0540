package alloc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/driver"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// taskConfig builds the driver's view of a task: node is the client's
// node (nil: unknown), net the allocation's network (nil: the host's),
// vols its csi volumes' states. Every string in the task's driver config
// is interpolated (see interpolate) with the task's environment and the
// node's ${node.*}, ${attr.*} and ${meta.*} values. Its host volumes are
// bound at their destinations (hostVolumeMounts; spawnTasks fails a task
// whose mounts do not resolve before it gets here).
func taskConfig(root string, node *messages.Node, a *messages.Allocation, t *messages.Task,
	net *clientstate.AllocNetwork, vols map[string]*messages.AllocVolumeState) *driver.TaskConfig {
	dir := TaskDir(root, a.GetID(), t.GetName())
	env := taskEnv(root, node, a, t, net)
	cfg := &driver.TaskConfig{
		ID:          a.GetID() + "/" + t.GetName(),
		AllocID:     a.GetID(),
		TaskName:    t.GetName(),
		Config:      interpolateConfig(t.GetConfig().AsMap(), refs{env: env, node: node}),
		Env:         env,
		User:        t.GetUser(),
		TaskDir:     dir,
		StdoutPath:  LogPath(root, a.GetID(), t.GetName(), "stdout"),
		StderrPath:  LogPath(root, a.GetID(), t.GetName(), "stderr"),
		Isolation:   isolation(root, a, t, vols),
		CPU:         int64(t.GetResources().GetCPU()),
		MemoryMB:    int64(t.GetResources().GetMemoryMB()),
		MemoryMaxMB: allocatedMemoryMax(a, t),
		Cores:       int(t.GetResources().GetCores()),
	}
	if tr := a.GetAllocatedResources().GetTasks()[t.GetName()]; len(tr.GetCpu().GetReservedCores()) > 0 {
		// Reserved cores: the cpuset, and the MHz they count for (cores x
		// MHz per core) as the task's CPU, as in Nomad.
		for _, c := range tr.GetCpu().GetReservedCores() {
			cfg.ReservedCores = append(cfg.ReservedCores, int(c))
		}
		cfg.CPU = tr.GetCpu().GetCpuShares()
	}
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = int(t.GetLogConfig().GetMaxFiles()), int(t.GetLogConfig().GetMaxFileSizeMB())
	if cfg.Config == nil {
		cfg.Config = map[string]any{}
	}
	if net != nil {
		cfg.NetnsPath = net.NetnsPath
	}
	hostMounts, _ := hostVolumeMounts(node, a, t)
	if cfg.Isolation != nil && isolatedExec(t) {
		cfg.Isolation.Mounts = append(cfg.Isolation.Mounts, hostMounts...)
	}
	if t.GetDriver() == containerdDriver {
		cfg.Config = containerdConfig(cfg.Config, a, t, net, vols, hostMounts)
	}
	return cfg
}

// allocatedMemoryMax is task t's memory limit above its reservation as
// the scheduler allocated it: without memory oversubscription it gives
// none, and the task's memory_max is ignored, as in Nomad.
func allocatedMemoryMax(a *messages.Allocation, t *messages.Task) int64 {
	return a.GetAllocatedResources().GetTasks()[t.GetName()].GetMemory().GetMemoryMaxMB()
}

// containerdConfig adds to a containerd task's driver config (a copy) the
// network namespace ("netns_path") and its csi volumes ("volume_mounts":
// the published target at the mount's destination in the container) and
// its host volumes (hostMounts, bound likewise); the exec driver gets
// these as TaskConfig.NetnsPath and Isolation.Mounts instead.
func containerdConfig(in map[string]any, a *messages.Allocation, t *messages.Task, net *clientstate.AllocNetwork,
	vols map[string]*messages.AllocVolumeState, hostMounts []driver.Mount) map[string]any {
	out := maps.Clone(in)
	if net != nil && net.NetnsPath != "" {
		out["netns_path"] = net.NetnsPath
	}
	reqs := csiVolumes(a)
	var mounts []any
	for _, vm := range t.GetVolumeMounts() {
		req, ok := reqs[vm.GetVolume()]
		if !ok || vols[vm.GetVolume()].GetTargetPath() == "" {
			continue
		}
		mounts = append(mounts, map[string]any{"source": vols[vm.GetVolume()].GetTargetPath(),
			"target": containerPath(vm.GetDestination()), "readonly": req.GetReadOnly() || vm.GetReadOnly()})
	}
	for _, m := range hostMounts {
		mounts = append(mounts, map[string]any{"source": m.Source, "target": m.Destination, "readonly": m.ReadOnly})
	}
	appendList(out, "volume_mounts", mounts)
	return out
}

// appendList appends items to the list config[key], in a new slice. A
// value that is not a list is left for the driver to reject.
func appendList(config map[string]any, key string, items []any) {
	if len(items) == 0 {
		return
	}
	switch l := config[key].(type) {
	case nil:
		config[key] = items
	case []any:
		config[key] = append(slices.Clone(l), items...)
	}
}

// containerPath is a volume mount's destination inside a container.
func containerPath(destination string) string {
	return filepath.Clean("/" + destination)
}

// taskEnv is the task's environment: troupe's variables (and Nomad's names
// for them, so existing scripts work), the meta (metaVars), the ports (portVars), where each
// csi or host volume is mounted (TROUPE_VOLUME_<NAME>), then the task's env block,
// whose values may refer to all of those and to the node's variables.
func taskEnv(root string, node *messages.Node, a *messages.Allocation, t *messages.Task,
	net *clientstate.AllocNetwork) map[string]string {
	vars := map[string]string{
		"ALLOC_ID":      a.GetID(),
		"ALLOC_NAME":    a.GetName(),
		"ALLOC_INDEX":   fmt.Sprint(a.GetIndex()),
		"TASK_NAME":     t.GetName(),
		"GROUP_NAME":    a.GetTaskGroup(),
		"JOB_ID":        a.GetJobID(),
		"JOB_NAME":      a.GetJob().GetName(),
		"NAMESPACE":     a.GetNamespace(),
		"REGION":        a.GetJob().GetRegion(),
		"CPU_LIMIT":     fmt.Sprint(t.GetResources().GetCPU()),
		"MEMORY_LIMIT":  fmt.Sprint(t.GetResources().GetMemoryMB()),
		"ALLOC_NODE_ID": a.GetNodeID(),
	}
	maps.Copy(vars, metaVars(a, t))
	maps.Copy(vars, taskDirVars(root, a, t))
	maps.Copy(vars, portVars(a, net))
	env := map[string]string{"PATH": defaultPath}
	for k, v := range vars {
		env["TROUPE_"+k] = v
		env["NOMAD_"+k] = v
	}
	csiVols, hostVols := csiVolumes(a), hostVolumes(a)
	for _, vm := range t.GetVolumeMounts() {
		if _, ok := csiVols[vm.GetVolume()]; ok && ownRoot(t) {
			env[volumeEnvName(vm.GetVolume())] = containerPath(vm.GetDestination())
		} else if ok {
			env[volumeEnvName(vm.GetVolume())] = volumeMountPath(root, a.GetID(), t.GetName(), vm.GetDestination())
		} else if _, host := hostVols[vm.GetVolume()]; host && ownRoot(t) {
			env[volumeEnvName(vm.GetVolume())] = containerPath(vm.GetDestination())
		}
	}
	if cfg := t.GetCSIPluginConfig(); cfg != nil {
		env["CSI_ENDPOINT"] = "unix://" + PluginSocketPath(root, a.GetID(), t.GetName(), cfg.GetMountDir())
	}
	base := maps.Clone(env)
	for k, v := range t.GetEnv() {
		env[k] = interpolate(v, refs{env: base, node: node})
	}
	return env
}

// maxSocketPath is the longest unix socket path Linux binds (108 bytes
// with the terminating NUL).
const maxSocketPath = 107

// PluginSocketPath is where a CSI plugin task listens: csi.sock in its
// mount_dir inside the task dir (which stays inside whatever it says) (the task learns it as CSI_ENDPOINT). When
// that path is too long for a unix socket (a deep data dir), a short
// directory under the system's temp dir, named by a hash of the long path
// so a restarted agent finds it again, stands in.
func PluginSocketPath(root, allocID, task, mountDir string) string {
	if mountDir == "" {
		mountDir = "/csi"
	}
	p := filepath.Join(TaskDir(root, allocID, task), filepath.Clean("/"+mountDir), "csi.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(p))
	return filepath.Join(os.TempDir(), "troupe-csi-"+hex.EncodeToString(sum[:8]), "csi.sock")
}

// metaVars are the job's, the group's and the task's meta, the later
// winning (a dispatched job's meta holds the dispatch's), as META_<key>
// and META_<KEY> (Nomad's NOMAD_META_ names, both spellings).
func metaVars(a *messages.Allocation, t *messages.Task) map[string]string {
	meta := maps.Clone(a.GetJob().GetMeta())
	if meta == nil {
		meta = map[string]string{}
	}
	maps.Copy(meta, groupOf(a).GetMeta())
	maps.Copy(meta, t.GetMeta())
	out := make(map[string]string, 2*len(meta))
	for k, v := range meta {
		out["META_"+k] = v
		out["META_"+strings.ToUpper(k)] = v
	}
	return out
}
