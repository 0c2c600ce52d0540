package mount

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mountCount is how many mounts this namespace has on path.
func mountCount(t *testing.T, path string) int {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && unescapeMountPath(f[4]) == path {
			n++
		}
	}
	return n
}

// TestTmpfsOnceThenUnmountAll: the dir is a tmpfs (statfs), whose files
// are not on the disk below (after the unmount the dir is empty); a second
// Tmpfs, through a symlink to the dir (an agent restart), mounts nothing;
// UnmountAll leaves no mount, and again is no error.
func TestTmpfsOnceThenUnmountAll(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	dir := filepath.Join(base, "secrets")
	require.NoError(t, os.Mkdir(dir, 0o700))
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })

	made, err := Tmpfs(dir, "size=1m,mode=0700")
	require.NoError(t, err)
	require.True(t, made)
	var fs unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &fs))
	require.Equal(t, int64(unix.TMPFS_MAGIC), int64(fs.Type), "a tmpfs")
	require.NotZero(t, fs.Flags&unix.ST_NOEXEC, "noexec")
	require.NotZero(t, fs.Flags&unix.ST_NOSUID, "nosuid")
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte("jwt"), 0o600))
	require.Error(t, os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2<<20), 0o600), "1 MiB at most")

	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(dir, link))
	made, err = Tmpfs(link, "size=1m,mode=0700")
	require.NoError(t, err)
	require.False(t, made, "a mount point already: not mounted twice")
	require.Equal(t, 1, mountCount(t, dir))

	require.NoError(t, UnmountAll(link))
	require.Equal(t, 0, mountCount(t, dir))
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the token never reached the disk")
	require.NoError(t, UnmountAll(dir), "no mount point: done")
	require.NoError(t, UnmountAll(filepath.Join(base, "missing")), "a missing dir: done")
}

// TestUnmountAllStacked: every mount stacked on the dir goes.
func TestUnmountAllStacked(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	for range 2 {
		require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
	}
	require.Equal(t, 2, mountCount(t, dir))
	require.NoError(t, UnmountAll(dir))
	require.Equal(t, 0, mountCount(t, dir))
}
