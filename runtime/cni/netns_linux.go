package cni

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// A persistent network namespace is a bind mount of a thread's
// /proc/.../ns/net onto a file, as `ip netns add` makes them.

// prepareNetnsDir creates dir and makes it a shared mount point, as
// iproute2 does for /var/run/netns, so that netns mounts made or removed
// later propagate to mount namespaces created in between (tasks).
func prepareNetnsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrNetns, err)
	}
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err = unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err == nil {
			err = unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
		}
	}
	if err != nil {
		return fmt.Errorf("%w: making %s a shared mount: %v", ErrNetns, dir, err)
	}
	return nil
}

// createNetns creates a new network namespace and pins it at path, which
// must not exist.
func createNetns(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrExists, path)
		}
		return fmt.Errorf("%w: %v", ErrNetns, err)
	}
	_ = f.Close()
	done := make(chan error, 1)
	go func() {
		// The thread is never unlocked: it ends with this goroutine, so the
		// runtime never reuses a thread left in the new namespace.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("unshare: %w", err)
			return
		}
		src := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		done <- unix.Mount(src, path, "none", unix.MS_BIND, "")
	}()
	if err := <-done; err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("%w: creating %s: %v", ErrNetns, path, err)
	}
	return nil
}

// netnsExists reports whether path is a pinned network namespace. A plain
// file (a namespace lost in a reboot on a disk that kept the file) is not.
func netnsExists(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// removeNetns unpins and removes path; one that is gone is no error.
func removeNetns(path string) error {
	err := unix.Unmount(path, unix.MNT_DETACH)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%w: unmounting %s: %v", ErrNetns, path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %v", ErrNetns, err)
	}
	return nil
}
