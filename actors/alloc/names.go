package alloc

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// eventSetupFailure is the event of a task whose allocation could not be
// set up (Nomad's "Setup Failure").
const eventSetupFailure = "Setup Failure"

// checkNames refuses an allocation with a name that the client builds a
// host path from (its ID, its group, task and volume names) and that is
// not one plain path element: such a name would put the task's files
// outside the allocation directory. The job's validation refuses them
// first; this holds for an allocation that skipped it (a job stored by an
// older version, a forwarded or replayed allocation).
func checkNames(a *messages.Allocation) error {
	if err := safepath.CheckName("allocation ID", a.GetID()); err != nil {
		return err
	}
	if err := safepath.CheckName("task group", a.GetTaskGroup()); err != nil {
		return err
	}
	g := groupOf(a)
	for _, t := range g.GetTasks() {
		if err := safepath.CheckName("task", t.GetName()); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.GetVolumes())) {
		if err := safepath.CheckName("volume", name); err != nil {
			return err
		}
	}
	return nil
}

// mountPoint prepares dst, beneath the allocation dir, for a bind mount of
// src: its parent dirs are made there, and a dst that is a symlink is
// refused (mount(2) would follow it: a task that planted <task>/data ->
// /etc would get the volume mounted on /etc), except the link to src that
// HostMounter leaves where it could not mount.
func mountPoint(allocDir, dst, src string) error {
	if err := safepath.MkdirAll(allocDir, filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	fi, err := safepath.Lstat(allocDir, dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink == 0:
		return nil
	}
	if target, err := os.Readlink(dst); err == nil && target == src {
		return nil
	}
	return fmt.Errorf("%w: mount point %s", safepath.ErrSymlink, dst)
}
