package alloc

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			return symlinkMount(src, dst)
		}
		return fmt.Errorf("bind %s on %s: %w", src, dst, err)
	}
	if !readOnly {
		return nil
	}
	if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		_ = unix.Unmount(dst, 0)
		return fmt.Errorf("remount %s read-only: %w", dst, err)
	}
	return nil
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
		if err := unix.Unmount(path, 0); err != nil && !errors.Is(err, unix.EINVAL) {
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
	path = filepath.Clean(path)
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMountPath(fields[4]) == path {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
