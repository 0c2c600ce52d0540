package mount

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a new tmpfs on dir, which must exist, with nosuid, nodev
// and noexec, and data as its options ("size=1m,mode=0700"), unless dir
// (its symlinks resolved, as mount(2) resolves them) is a mount point
// already: an agent that restarts over running tasks keeps the tmpfs
// they see. It reports whether it mounted one.
func Tmpfs(dir, data string) (bool, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false, err
	}
	mounted, err := IsMountPoint(real)
	if err != nil || mounted {
		return false, err
	}
	if err := unix.Mount("tmpfs", real, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, data); err != nil {
		return false, fmt.Errorf("mount tmpfs on %s: %w", dir, err)
	}
	return true, nil
}

// UnmountAll unmounts every mount stacked on dir (its symlinks resolved);
// one still busy in this namespace is detached (MNT_DETACH), so none is
// left on the path. A missing dir, or one that is no mount point, is done.
func UnmountAll(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for range 8 {
		mounted, err := IsMountPoint(real)
		if err != nil || !mounted {
			return err
		}
		err = unix.Unmount(real, 0)
		if errors.Is(err, unix.EBUSY) {
			err = unix.Unmount(real, unix.MNT_DETACH)
		}
		if err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
	}
	return fmt.Errorf("unmount %s: still mounted after 8 unmounts", dir)
}
