package hostpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// symlinkTarget makes target a symlink to src, replacing an empty
// directory the caller may have made for it.
func symlinkTarget(src, target string) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(target); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("hostpath: target %s exists and is not a directory", target)
		}
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("hostpath: target %s: %w", target, err)
		}
	}
	return os.Symlink(src, target)
}

// publishedAt reports whether target already shows src: a symlink to it,
// or a mount point.
func publishedAt(src, target string) bool {
	fi, err := os.Lstat(target)
	if err != nil {
		return false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		dest, err := os.Readlink(target)
		return err == nil && dest == src
	}
	mounted, err := isMountPoint(target)
	return err == nil && mounted
}

// maxUnmounts bounds the unmounts of stacked mounts on one target.
const maxUnmounts = 8

// unmountTarget undoes mountTarget: it removes a symlink, or unmounts and
// removes a directory. A missing target is not an error; a directory that
// is not a mount point and not empty is left alone.
func (p *Plugin) unmountTarget(target string) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		return os.Remove(target)
	}
	for range maxUnmounts {
		mounted, err := isMountPoint(target)
		if err != nil || !mounted {
			return p.removeDir(target, err)
		}
		if err := unmount(target); err != nil {
			return fmt.Errorf("hostpath: unmount %s: %w", target, err)
		}
	}
	return fmt.Errorf("hostpath: %s is still mounted after %d unmounts", target, maxUnmounts)
}

// removeDir removes an unmounted target directory.
func (p *Plugin) removeDir(target string, statErr error) error {
	if statErr != nil {
		return statErr
	}
	err := os.Remove(target)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		p.log.Warn("hostpath: target is not a mount point and not empty; left alone", "target", target)
		return nil
	}
	return err
}
