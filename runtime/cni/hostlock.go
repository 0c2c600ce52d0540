package cni

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lockPoll is how often lockFile tries a lock that another process holds.
const lockPoll = 5 * time.Millisecond

// lockFile takes an exclusive flock on path (made when missing) and
// returns its release. It tries again every lockPoll until ctx ends, so
// that a caller who gives up is never stuck in flock(2).
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cni: lock file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cni: lock file: %w", err)
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
