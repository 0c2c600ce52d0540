package mount

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Bind bind-mounts src on dst, which must exist, and when readOnly
// remounts it read-only; if that remount fails it unmounts dst again. A
// bind the kernel refuses with EPERM is a wrapped ErrBindRefused.
func Bind(src, dst string, readOnly bool) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%w: bind %s on %s: %w", ErrBindRefused, src, dst, err)
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

// Unmount unmounts the topmost mount on path. A path that is not a mount
// point (EINVAL) is no error; other errors are umount(2)'s, unwrapped.
func Unmount(path string) error {
	if err := unix.Unmount(path, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}

// IsMountPoint reports whether the cleaned path is a mount point of this
// process's mount namespace (/proc/self/mountinfo). It does not follow
// symlinks: callers resolve path as they need.
func IsMountPoint(path string) (bool, error) {
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
