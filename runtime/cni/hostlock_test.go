//go:build linux

package cni

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLockFileIsExclusiveAcrossOpenFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "cni.lock")
	unlock, err := lockFile(context.Background(), path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = lockFile(ctx, path)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, path)
	unlock()
	again, err := lockFile(context.Background(), path)
	require.NoError(t, err)
	again()
}

func TestSetupWaitsForTheHostsCNILock(t *testing.T) {
	tn := newTestNet(t)
	// Another troupe network on this host (another agent) is busy.
	unlock, err := lockFile(context.Background(), tn.cfg.LockFile)
	require.NoError(t, err)
	id := newID()
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	_, err = tn.Setup(ctx, SetupRequest{AllocID: id})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoFileExists(t, tn.NetnsPath(id), "nothing was made while waiting")
	require.Empty(t, reservedAddrs(t, tn))

	unlock()
	res, err := tn.Setup(testCtx(t), SetupRequest{AllocID: id})
	require.NoError(t, err)
	require.NoError(t, tn.Teardown(testCtx(t), id, res.RawResult, SetupRequest{}))
	tn.requireGone(t, id, res.IP)
}

// TestLockFileRefusesWhatOthersCouldControl: a lock in a directory others
// may write, a symlink in place of the lock or of its directory, or a
// lock that is not a regular file is refused, naming the path; nothing
// is created through the symlink.
func TestLockFileRefusesWhatOthersCouldControl(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()

	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, os.Chmod(shared, 0o1777)) // like /run/lock or /tmp
	_, err := lockFile(ctx, filepath.Join(shared, "cni.lock"))
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, shared)
	require.NoFileExists(t, filepath.Join(shared, "cni.lock"))

	own := filepath.Join(base, "own")
	require.NoError(t, os.Mkdir(own, 0o700))
	target := filepath.Join(base, "victim")
	require.NoError(t, os.Symlink(target, filepath.Join(own, "cni.lock")))
	_, err = lockFile(ctx, filepath.Join(own, "cni.lock"))
	require.Error(t, err, "the lock is a symlink")
	require.NoFileExists(t, target, "nothing made through the symlink")

	require.NoError(t, os.Symlink(own, filepath.Join(base, "link")))
	_, err = lockFile(ctx, filepath.Join(base, "link", "other.lock"))
	require.ErrorIs(t, err, ErrInvalidConfig, "the directory is a symlink")

	require.NoError(t, os.Mkdir(filepath.Join(own, "dir.lock"), 0o700))
	_, err = lockFile(ctx, filepath.Join(own, "dir.lock"))
	require.Error(t, err, "not a regular file")
}
