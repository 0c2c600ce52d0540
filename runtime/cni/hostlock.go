package cni

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lockPoll is how often lockFile tries a lock that another process holds.
const lockPoll = 5 * time.Millisecond

// lockFile takes an exclusive flock on path and returns its release. It
// tries again every lockPoll until ctx ends, so that a caller who gives up
// is never stuck in flock(2). The lock must be troupe's own: path's
// directory (made 0700 when missing) and path itself (made 0600) must
// belong to this process's user, the directory must not be writable by
// others and neither may be a symlink, so that another user can neither
// hold the lock forever nor point it at another file.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	var tick *time.Ticker
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("cni: locking %s: %w", path, err)
		}
		if tick == nil {
			tick = time.NewTicker(lockPoll)
			defer tick.Stop()
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("cni: waiting for the host's CNI lock %s: %w", path, ctx.Err())
		}
	}
	return func() { _ = f.Close() }, nil // closing the file releases the flock
}

// openLockFile opens (or makes) the lock file after the checks that
// lockFile describes.
func openLockFile(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cni: lock file: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("cni: lock file: %w", err)
	}
	if err := ownedBySelf(dir, fi); err != nil {
		return nil, err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%w: lock directory %s is not a directory that only its owner can write (%v)",
			ErrInvalidConfig, dir, fi.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cni: lock file: %w", err)
	}
	fi, err = f.Stat()
	if err == nil {
		err = ownedBySelf(path, fi)
	}
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: lock file %s is not a regular file", ErrInvalidConfig, path)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ownedBySelf fails unless fi belongs to this process's effective user.
func ownedBySelf(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s does not belong to this process's user", ErrInvalidConfig, path)
	}
	return nil
}
