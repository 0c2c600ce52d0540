package alloc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// The allocation directory follows Nomad's layout:
//
//	<alloc>/alloc/logs/<task>.stdout.N  (and .stderr.N; exec rotates them)
//	<alloc>/alloc/data, <alloc>/alloc/tmp  (shared by the tasks: /alloc)
//	<alloc>/<task>/local                   (the task's /local)
//	<alloc>/<task>/secrets                 (/secrets: a tmpfs in an isolated task)
//	<alloc>/<task>/tmp                     (/tmp)
const (
	sharedDirName  = "alloc"
	logsDirName    = "logs"
	localDirName   = "local"
	secretsDirName = "secrets"
	tmpDirName     = "tmp"
)

// isolatedDrivers run their tasks in the exec driver's isolation (java
// wraps an exec driver, as in Nomad).
var isolatedDrivers = map[string]bool{"exec": true, "java": true}

// dirModes are the modes of the layout's directories: a task running as
// nobody writes its local and tmp dirs and the shared data and tmp.
var dirModes = map[string]os.FileMode{
	"data": 0o777, tmpDirName: 0o777 | os.ModeSticky, localDirName: 0o777, secretsDirName: 0o700,
}

// SharedDir is the allocation's shared directory, a task's /alloc.
func SharedDir(root, allocID string) string {
	return filepath.Join(root, allocID, sharedDirName)
}

// LogPath is the base of a task's stdout or stderr (logType) log, in the
// shared dir's logs: the exec driver writes it rotated, as base.0, base.1,
// ... (Nomad's <task>.stdout.N); a driver that does not rotate (containerd,
// qemu) writes the base itself. The names must have passed checkNames
// (safepath.CheckName).
func LogPath(root, allocID, task, logType string) string {
	return filepath.Join(SharedDir(root, allocID), logsDirName, task+"."+logType)
}

// sharedDirs are the shared dir and what it holds.
func sharedDirs(allocDir string) []string {
	shared := filepath.Join(allocDir, sharedDirName)
	return []string{shared, filepath.Join(shared, logsDirName), filepath.Join(shared, "data"), filepath.Join(shared, tmpDirName)}
}

// taskDirs are a task's dir and what it holds.
func taskDirs(taskDir string) []string {
	return []string{taskDir, filepath.Join(taskDir, localDirName), filepath.Join(taskDir, secretsDirName),
		filepath.Join(taskDir, tmpDirName)}
}

// makeDir makes dir beneath allocDir (never through a symlink) with its
// layout mode.
func makeDir(allocDir, dir string) error {
	if err := safepath.MkdirAll(allocDir, dir, 0o755); err != nil {
		return err
	}
	mode, ok := dirModes[filepath.Base(dir)]
	if !ok || filepath.Dir(dir) == allocDir {
		return nil // <alloc>/<task> named "tmp" or "local" keeps 0755
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", safepath.ErrSymlink, dir)
	}
	return os.Chmod(dir, mode)
}

// isolatedExec: an exec or java task runs in its own root and namespaces,
// except a CSI plugin's, which mounts for the host.
func isolatedExec(t *messages.Task) bool {
	return isolatedDrivers[t.GetDriver()] && t.GetCSIPluginConfig() == nil
}

// ownRoot: the task sees its directories at /alloc, /local and /secrets.
func ownRoot(t *messages.Task) bool {
	return isolatedExec(t) || t.GetDriver() == containerdDriver
}

// taskDirVars are NOMAD_ALLOC_DIR, NOMAD_TASK_DIR and NOMAD_SECRETS_DIR
// (without their prefix) as the task sees them.
func taskDirVars(root string, a *messages.Allocation, t *messages.Task) map[string]string {
	if ownRoot(t) {
		return map[string]string{"ALLOC_DIR": driver.TaskAllocDir, "TASK_DIR": driver.TaskLocalDir,
			"SECRETS_DIR": driver.TaskSecretsDir}
	}
	dir := TaskDir(root, a.GetID(), t.GetName())
	return map[string]string{"ALLOC_DIR": SharedDir(root, a.GetID()), "TASK_DIR": filepath.Join(dir, localDirName),
		"SECRETS_DIR": filepath.Join(dir, secretsDirName)}
}

// isolation is an isolated exec or java task's Isolation: the shared dir and its
// CSI volumes, bound at their mounts' destinations (nil for other tasks).
func isolation(root string, a *messages.Allocation, t *messages.Task, vols map[string]*messages.AllocVolumeState) *driver.Isolation {
	if !ownRoot(t) {
		return nil
	}
	iso := &driver.Isolation{AllocDir: SharedDir(root, a.GetID())}
	if !isolatedExec(t) {
		return iso // containerd mounts its volumes itself ("volume_mounts")
	}
	reqs := csiVolumes(a)
	for _, vm := range t.GetVolumeMounts() {
		req, ok := reqs[vm.GetVolume()]
		if !ok || vols[vm.GetVolume()].GetTargetPath() == "" {
			continue
		}
		iso.Mounts = append(iso.Mounts, driver.Mount{Source: vols[vm.GetVolume()].GetTargetPath(),
			Destination: containerPath(vm.GetDestination()), ReadOnly: req.GetReadOnly() || vm.GetReadOnly()})
	}
	return iso
}
