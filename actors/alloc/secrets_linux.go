package alloc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/troupe-dev/troupe/runtime/mount"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// secretsTmpfsData are the options of a task's secrets tmpfs: Nomad's
// 1 MiB, root's and 0700 until the exec driver gives it to an isolated
// task's user at its start.
const secretsTmpfsData = "size=1m,mode=0700"

// SecretsTmpfs reports whether this agent can give each task's secrets
// dir its own tmpfs (it runs as root on Linux), and if not, why.
func SecretsTmpfs() (bool, string) {
	if os.Geteuid() != 0 {
		return false, "the agent is not root: the tasks' secrets dirs are plain directories on disk"
	}
	return true, ""
}

// mountSecrets mounts the secrets tmpfs on dir, an existing directory,
// unless one is there (an agent restart over running tasks).
func mountSecrets(dir string) error {
	_, err := mount.Tmpfs(dir, secretsTmpfsData)
	return err
}

// secretsMounted reports whether any of dirs is a mount point.
func secretsMounted(dirs []string) bool {
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if ok, err := mount.IsMountPoint(real); err != nil || ok {
			return true // unknown: let the teardown look again
		}
	}
	return false
}

// unmountSecrets unmounts dir's tmpfs, if any: what it held is gone.
func unmountSecrets(dir string) error { return mount.UnmountAll(dir) }

// secretsOwner is the owner a file the client writes at rel (beneath
// taskDir) takes: in the secrets dir, when the agent is root, the dir's
// owner (an isolated task's user, once it started, so it reads its
// renewed identity and re-rendered templates); else -1, -1 (unchanged).
func secretsOwner(taskDir, rel string) (int, int) {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if os.Geteuid() != 0 || first != secretsDirName {
		return -1, -1
	}
	fi, err := safepath.Lstat(taskDir, filepath.Join(taskDir, secretsDirName))
	if err != nil || !fi.IsDir() {
		return -1, -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1
	}
	return int(st.Uid), int(st.Gid)
}
