package alloc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/runtime/mount"
)

// HostMounter is the real Mounter: bind mounts through mount(2). Where the
// kernel refuses to mount (not root, no CAP_SYS_ADMIN) it makes dst a
// symlink to src instead, so a development agent still gives its tasks
// the volume (without read-only enforcement).
type HostMounter struct{}

var _ Mounter = HostMounter{}

// Bind bind-mounts src on dst (creating dst like src: a directory or a
// file) and remounts it read-only when asked.
func (HostMounter) Bind(src, dst string, readOnly bool) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if err := makeMountPoint(dst, fi.IsDir()); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	err = mount.Bind(src, dst, readOnly)
	if errors.Is(err, mount.ErrBindRefused) {
		return symlinkMount(src, dst)
	}
	return err
}

func makeMountPoint(dst string, dir bool) error {
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// symlinkMount replaces the empty mount point dst by a symlink to src.
func symlinkMount(src, dst string) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return os.Symlink(src, dst)
}

// Unmount unmounts path (every mount stacked on it) or removes the
// symlink that stands in for a mount. A path that is not mounted, or
// missing, is done.
func (m HostMounter) Unmount(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return os.Remove(path)
	}
	for range 8 {
		mounted, err := m.Mounted(path)
		if err != nil || !mounted {
			return err
		}
		if err := mount.Unmount(path); err != nil {
			return fmt.Errorf("unmount %s: %w", path, err)
		}
	}
	return fmt.Errorf("unmount %s: still mounted after 8 unmounts", path)
}

// Mounted reports whether path is a mount point (from
// /proc/self/mountinfo) or a symlink standing in for one.
func (HostMounter) Mounted(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		_, err := os.Stat(path)
		return err == nil, nil
	}
	return mount.IsMountPoint(path)
}
