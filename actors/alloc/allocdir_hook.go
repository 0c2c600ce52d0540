package alloc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// AllocDirHook creates the allocation's directory tree in Nomad's layout
// (layout.go): <root>/<alloc-id>/alloc (shared: logs, data, tmp) and
// <root>/<alloc-id>/<task> (local, secrets, tmp) per task.
type AllocDirHook struct {
	Root string
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

// Postrun implements postrunHook: it removes the short socket directories
// that stood in for CSI plugin mount dirs too deep for a unix socket path
// (the alloc dir itself stays, with the logs). An allocation with an
// unsafe name made none.
func (h *AllocDirHook) Postrun(_ context.Context, a *messages.Allocation) error {
	if checkNames(a) != nil {
		return nil
	}
	var errs []error
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
