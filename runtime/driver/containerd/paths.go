package containerd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// checkPaths refuses a task whose names or paths would lead the driver, or
// the shim and runc (root, following symlinks), out of the task's
// allocation dir (TaskDir's parent): the allocation ID and task name must
// be plain path elements, TaskDir (bind-mounted into the container) a
// clean absolute path to a directory that is not a symlink, and the log
// files beneath the allocation dir.
func checkPaths(cfg *driver.TaskConfig) error {
	for _, n := range []struct{ kind, name string }{{"allocation ID", cfg.AllocID}, {"task", cfg.TaskName}} {
		if err := safepath.CheckName(n.kind, n.name); err != nil {
			return fmt.Errorf("%w: %s: %w", driver.ErrInvalidConfig, cfg.ID, err)
		}
	}
	if cfg.TaskDir == "" {
		if cfg.StdoutPath != "" || cfg.StderrPath != "" {
			return fmt.Errorf("%w: %s: log files need a task dir", driver.ErrInvalidConfig, cfg.ID)
		}
		return nil
	}
	if !filepath.IsAbs(cfg.TaskDir) || filepath.Clean(cfg.TaskDir) != cfg.TaskDir {
		return fmt.Errorf("%w: %s: task dir %q is not a clean absolute path", driver.ErrInvalidConfig, cfg.ID, cfg.TaskDir)
	}
	base := filepath.Dir(cfg.TaskDir)
	fi, err := safepath.Lstat(base, cfg.TaskDir)
	if err != nil {
		return fmt.Errorf("%w: %s: task dir: %w", driver.ErrInvalidConfig, cfg.ID, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s: task dir %s: %w", driver.ErrInvalidConfig, cfg.ID, cfg.TaskDir, safepath.ErrSymlink)
	}
	for _, p := range []string{cfg.StdoutPath, cfg.StderrPath} {
		if p != "" && !safepath.Within(base, p) {
			return fmt.Errorf("%w: %s: log file %q is outside the allocation dir", driver.ErrInvalidConfig, cfg.ID, p)
		}
	}
	return nil
}

// createLogFiles makes sure the log files exist: the shim appends to them
// but does not create them. They are made beneath the allocation dir, and
// one that is there as a symlink or anything but a regular file is
// refused: the shim (root) would follow it.
func createLogFiles(cfg *driver.TaskConfig) error {
	base := filepath.Dir(cfg.TaskDir)
	for _, p := range []string{cfg.StdoutPath, cfg.StderrPath} {
		if p == "" {
			continue
		}
		fi, err := safepath.Lstat(base, p)
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: %w", p, safepath.ErrSymlink)
		}
		f, err := safepath.OpenFile(base, p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
