package alloc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// needRoot skips a test that mounts when not root, except on CI, where
// the mounts must be tested.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test needs root on CI (CI=true): run the tests as root")
	}
	t.Skip("skipped: bind mounts need root (run as root, or with CI=true to make this a failure)")
}

func TestHostMounterBindsReadOnlyAndUnmounts(t *testing.T) {
	needRoot(t)
	var m Mounter = HostMounter{}
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "hello"), []byte("hi"), 0o644))
	dst := filepath.Join(t.TempDir(), "task", "mnt", "data")
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })

	ok, err := m.Mounted(dst)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, m.Bind(src, dst, true))
	ok, err = m.Mounted(dst)
	require.NoError(t, err)
	require.True(t, ok)
	b, err := os.ReadFile(filepath.Join(dst, "hello"))
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
	err = os.WriteFile(filepath.Join(dst, "new"), []byte("x"), 0o644)
	require.True(t, errors.Is(err, unix.EROFS), "read-only bind: %v", err)

	require.NoError(t, m.Unmount(dst))
	ok, err = m.Mounted(dst)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoFileExists(t, filepath.Join(dst, "hello"), "the source is no longer visible")
	require.NoError(t, m.Unmount(dst), "unmounting what is not mounted is done")
	require.NoError(t, m.Unmount(filepath.Join(t.TempDir(), "missing")))
}

func TestHostMounterBindsReadWriteFile(t *testing.T) {
	needRoot(t)
	m := HostMounter{}
	src := filepath.Join(t.TempDir(), "dev")
	require.NoError(t, os.WriteFile(src, []byte("block"), 0o644))
	dst := filepath.Join(t.TempDir(), "task", "dev", "xvdb")
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
	require.NoError(t, m.Bind(src, dst, false))
	require.NoError(t, os.WriteFile(dst, []byte("written"), 0o644))
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.Equal(t, "written", string(b), "writes go through to the source")
	require.NoError(t, m.Unmount(dst))
	ok, err := m.Mounted(dst)
	require.NoError(t, err)
	require.False(t, ok)
}
