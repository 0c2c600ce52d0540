package alloc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// taskConfig builds the driver's view of a task.
func taskConfig(root string, a *messages.Allocation, t *messages.Task) *driver.TaskConfig {
	dir := TaskDir(root, a.GetID(), t.GetName())
	cfg := &driver.TaskConfig{
		ID:          a.GetID() + "/" + t.GetName(),
		AllocID:     a.GetID(),
		TaskName:    t.GetName(),
		Config:      t.GetConfig().AsMap(),
		Env:         taskEnv(root, a, t),
		User:        t.GetUser(),
		TaskDir:     dir,
		StdoutPath:  filepath.Join(dir, "stdout"),
		StderrPath:  filepath.Join(dir, "stderr"),
		CPU:         int64(t.GetResources().GetCPU()),
		MemoryMB:    int64(t.GetResources().GetMemoryMB()),
		MemoryMaxMB: int64(t.GetResources().GetMemoryMaxMB()),
	}
	if cfg.Config == nil {
		cfg.Config = map[string]any{}
	}
	return cfg
}

// taskEnv is the task's environment: troupe's variables (and Nomad's names
// for them, so existing scripts work), where each csi volume is mounted
// (TROUPE_VOLUME_<NAME>), then the task's env block.
func taskEnv(root string, a *messages.Allocation, t *messages.Task) map[string]string {
	vars := map[string]string{
		"ALLOC_ID":      a.GetID(),
		"ALLOC_NAME":    a.GetName(),
		"ALLOC_INDEX":   fmt.Sprint(a.GetIndex()),
		"ALLOC_DIR":     filepath.Join(root, a.GetID(), "alloc"),
		"TASK_DIR":      TaskDir(root, a.GetID(), t.GetName()),
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
	env := map[string]string{"PATH": defaultPath}
	for k, v := range vars {
		env["TROUPE_"+k] = v
		env["NOMAD_"+k] = v
	}
	csiVols := csiVolumes(a)
	for _, vm := range t.GetVolumeMounts() {
		if _, ok := csiVols[vm.GetVolume()]; ok {
			env[VolumeEnvName(vm.GetVolume())] = VolumeMountPath(root, a.GetID(), t.GetName(), vm.GetDestination())
		}
	}
	if cfg := t.GetCSIPluginConfig(); cfg != nil {
		env["CSI_ENDPOINT"] = "unix://" + PluginSocketPath(root, a.GetID(), t.GetName(), cfg.GetMountDir())
	}
	for k, v := range t.GetEnv() {
		env[k] = interpolate(v, env)
	}
	return env
}

// interpolate replaces ${NAME} references to variables already in env.
func interpolate(s string, env map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	for k, v := range env {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
	}
	return s
}

// maxSocketPath is the longest unix socket path Linux binds (108 bytes
// with the terminating NUL).
const maxSocketPath = 107

// PluginSocketPath is where a CSI plugin task listens: csi.sock in its
// mount_dir inside the task dir (the task learns it as CSI_ENDPOINT). When
// that path is too long for a unix socket (a deep data dir), a short
// directory under the system's temp dir, named by a hash of the long path
// so a restarted agent finds it again, stands in.
func PluginSocketPath(root, allocID, task, mountDir string) string {
	if mountDir == "" {
		mountDir = "/csi"
	}
	p := filepath.Join(TaskDir(root, allocID, task), mountDir, "csi.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(p))
	return filepath.Join(os.TempDir(), "troupe-csi-"+hex.EncodeToString(sum[:8]), "csi.sock")
}
