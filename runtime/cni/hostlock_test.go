//go:build linux

package cni

import (
	"context"
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
