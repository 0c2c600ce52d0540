package alloc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// AllocDirHook creates the allocation's directory tree in Nomad's layout
// (layout.go): <root>/<alloc-id>/alloc (shared: logs, data, tmp) and
// <root>/<alloc-id>/<task> (local, secrets, tmp) per task. With
// SecretsTmpfs each task's secrets dir is a tmpfs of its own (Nomad's, 1
// MiB), mounted before anything is written there and unmounted at its
// postrun, so a secret never reaches the disk (secrets_linux.go).
type AllocDirHook struct {
	Root         string
	SecretsTmpfs bool

	// mounted: a secrets tmpfs may be mounted (set by Prerun, in a
	// worker, and by Restore; read by holding, on the actor).
	mounted atomic.Bool
}

// Name implements Hook.
func (h *AllocDirHook) Name() string { return "alloc_dir" }

// Prerun implements prerunHook. Every directory is made beneath the
// allocation's own, which is made beneath Root: a name that is not one
// path element is refused, and a symlink planted on the way that leads out
// of the allocation dir (<task> -> /tmp/x) fails the setup, making nothing
// outside.
func (h *AllocDirHook) Prerun(_ context.Context, a *messages.Allocation) error {
	if err := checkNames(a); err != nil {
		return fmt.Errorf("alloc dir: %w", err)
	}
	allocDir, err := h.allocDir(a)
	if err != nil {
		return err
	}
	dirs := sharedDirs(allocDir)
	var outside []string // CSI socket stand-ins under the temp dir
	for _, t := range groupOf(a).GetTasks() {
		dirs = append(dirs, taskDirs(TaskDir(h.Root, a.GetID(), t.GetName()))...)
		if cfg := t.GetCSIPluginConfig(); cfg != nil {
			d := filepath.Dir(PluginSocketPath(h.Root, a.GetID(), t.GetName(), cfg.GetMountDir()))
			if safepath.Within(allocDir, d) {
				dirs = append(dirs, d)
			} else {
				outside = append(outside, d)
			}
		}
	}
	for _, d := range dirs {
		if err := makeDir(allocDir, d); err != nil {
			return fmt.Errorf("alloc dir: %w", err)
		}
	}
	if h.SecretsTmpfs {
		h.mounted.Store(true) // from the first try: a failure tears down
		for _, d := range h.secretsDirs(a) {
			if err := mountSecrets(d); err != nil {
				return fmt.Errorf("alloc dir: secrets: %w", err)
			}
		}
	}
	for _, d := range outside {
		if err := socketStandIn(d); err != nil {
			return fmt.Errorf("alloc dir: %w", err)
		}
	}
	return nil
}

// allocDir makes <Root>/<alloc-id> (Root is the agent's, trusted) and
// makes sure it is a directory, not a symlink.
func (h *AllocDirHook) allocDir(a *messages.Allocation) (string, error) {
	dir, err := safepath.Join(h.Root, a.GetID())
	if err == nil {
		err = safepath.MkdirAll(h.Root, dir, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("alloc dir: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("alloc dir: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("alloc dir: %w: %s is not a directory", safepath.ErrSymlink, dir)
	}
	return dir, nil
}

// socketStandIn makes a CSI socket's stand-in directory under the temp
// dir, refusing one that is there already as a symlink or a file (the
// temp dir is everyone's).
func socketStandIn(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", safepath.ErrSymlink, dir)
	}
	return nil
}

// secretsDirs are the allocation's tasks' secrets dirs (the names must
// have passed checkNames).
func (h *AllocDirHook) secretsDirs(a *messages.Allocation) []string {
	var out []string
	for _, t := range groupOf(a).GetTasks() {
		out = append(out, filepath.Join(TaskDir(h.Root, a.GetID(), t.GetName()), secretsDirName))
	}
	return out
}

// Restore implements restoreHook: after an agent restart, a secrets
// tmpfs still mounted is held (a stopped allocation's is then torn down).
func (h *AllocDirHook) Restore(stored *clientstate.StoredAlloc) {
	if h.SecretsTmpfs && checkNames(stored.Alloc) == nil && secretsMounted(h.secretsDirs(stored.Alloc)) {
		h.mounted.Store(true)
	}
}

// holding implements holder: a secrets tmpfs may be mounted.
func (h *AllocDirHook) holding() bool { return h.mounted.Load() }

// Postrun implements postrunHook: it unmounts the tasks' secrets tmpfs
// (what they held is gone; the empty dirs stay) and removes the short
// socket directories that stood in for CSI plugin mount dirs too deep for
// a unix socket path (the alloc dir itself stays, with the logs). An
// allocation with an unsafe name made none.
func (h *AllocDirHook) Postrun(_ context.Context, a *messages.Allocation) error {
	if checkNames(a) != nil {
		return nil
	}
	var errs []error
	for _, d := range h.secretsDirs(a) {
		errs = append(errs, unmountSecrets(d))
	}
	if errors.Join(errs...) == nil {
		h.mounted.Store(false)
	}
	for _, t := range groupOf(a).GetTasks() {
		cfg := t.GetCSIPluginConfig()
		if cfg == nil {
			continue
		}
		dir := filepath.Dir(PluginSocketPath(h.Root, a.GetID(), t.GetName(), cfg.GetMountDir()))
		if !safepath.Within(filepath.Join(h.Root, a.GetID()), dir) {
			// a symlink there is removed itself, never what it points to
			errs = append(errs, safepath.RemoveAll(filepath.Dir(dir), dir))
		}
	}
	return errors.Join(errs...)
}

// TaskDir is where a task runs and writes its stdout and stderr files.
// The names must have passed checkNames (safepath.CheckName).
func TaskDir(root, allocID, task string) string {
	return filepath.Join(root, allocID, task)
}
