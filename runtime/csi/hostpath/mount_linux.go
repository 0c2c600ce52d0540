package hostpath

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// bindMounts reports whether NodePublish uses bind mounts: as root,
// unless Config.Symlinks.
func (p *Plugin) bindMounts() bool { return !p.cfg.Symlinks && os.Geteuid() == 0 }

// mountTarget bind-mounts src on target (then remounts it read-only when
// asked). As non-root, or when the kernel refuses the mount with EPERM
// (root without CAP_SYS_ADMIN), it falls back to a symlink.
func (p *Plugin) mountTarget(src, target string, readOnly bool) error {
	if !p.bindMounts() {
		return symlinkTarget(src, target)
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(src, target, "", syscall.MS_BIND, ""); err != nil {
		if errors.Is(err, syscall.EPERM) {
			p.log.Warn("hostpath: bind mount refused, using a symlink", "target", target, "err", err)
			return symlinkTarget(src, target)
		}
		return err
	}
	if !readOnly {
		return nil
	}
	flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
	if err := syscall.Mount("", target, "", flags, ""); err != nil {
		_ = syscall.Unmount(target, 0)
		return err
	}
	return nil
}

func unmount(target string) error {
	err := syscall.Unmount(target, 0)
	if errors.Is(err, syscall.EINVAL) { // not a mount point (any more)
		return nil
	}
	return err
}

// isMountPoint reports whether path is a mount point, from
// /proc/self/mountinfo.
func isMountPoint(path string) (bool, error) {
	path, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, err
	}
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
