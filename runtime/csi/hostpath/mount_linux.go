package hostpath

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/runtime/mount"
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
	err := mount.Bind(src, target, readOnly)
	if errors.Is(err, mount.ErrBindRefused) {
		p.log.Warn("hostpath: bind mount refused, using a symlink", "target", target, "err", err)
		return symlinkTarget(src, target)
	}
	return err
}

// unmount unmounts target's topmost mount; a target that is not a mount
// point (any more) is done.
func unmount(target string) error { return mount.Unmount(target) }

// isMountPoint reports whether path, its symlinks resolved, is a mount
// point.
func isMountPoint(path string) (bool, error) {
	path, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, err
	}
	return mount.IsMountPoint(path)
}
