//go:build linux

package exec

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/runtime/mount"
)

// clientSecrets mounts a tmpfs on the task's secrets dir as a root
// client does (actors/alloc: size=1m, mode 0700, nosuid nodev noexec) and
// unmounts it at the test's end, after the task is killed (cleanups run
// last first). It returns the dir.
func clientSecrets(t *testing.T, taskDir string) string {
	t.Helper()
	dir := filepath.Join(taskDir, "secrets")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	made, err := mount.Tmpfs(dir, "size=1m,mode=0700")
	require.NoError(t, err)
	require.True(t, made)
	t.Cleanup(func() { require.NoError(t, mount.UnmountAll(dir)) })
	return dir
}

// TestIsolatedTaskSecretsBound: the task's /secrets is the client's
// secrets dir, bound: what the client wrote there before the start (a
// workload identity file, a template in a sub dir) is the task's user's,
// with its mode, a file of another owner keeps it, a link there leads
// nowhere in the task's root, and what the task writes is in the client's
// tmpfs, never on the disk below it.
func TestIsolatedTaskSecretsBound(t *testing.T) {
	requireRoot(t, "isolation")
	cfg, base := isolated(t, `cat /secrets/nomad_token; echo; stat -c '%a %u' /secrets/nomad_token /secrets/sub /secrets/theirs
cat /secrets/sub/db.env; cat /secrets/link 2>/dev/null || echo no-link
grep ' /secrets ' /proc/self/mountinfo | grep -c ' - tmpfs '
echo task > /secrets/own && echo wrote-own`)
	secrets := clientSecrets(t, cfg.TaskDir)
	require.NoError(t, os.Mkdir(filepath.Join(secrets, "sub"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "nomad_token"), []byte("jwt.of.task"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "sub", "db.env"), []byte("DB=1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "theirs"), nil, 0o644))
	require.NoError(t, os.Lchown(filepath.Join(secrets, "theirs"), 1, 1)) // a template's uid
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.WriteFile(outside, []byte("host only"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(secrets, "link")))

	out, _ := runIsolated(t, newDriver(t), cfg)
	require.Equal(t, "jwt.of.task\n600 65534\n750 65534\n644 1\nDB=1\nno-link\n1\nwrote-own\n", out)
	b, err := os.ReadFile(filepath.Join(secrets, "own"))
	require.NoError(t, err, "the task's /secrets is the client's secrets dir")
	require.Equal(t, "task\n", string(b))
	fi, err := os.Lstat(outside)
	require.NoError(t, err)
	require.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid, "a link's target is never changed")

	require.NoError(t, mount.UnmountAll(secrets))
	left, err := os.ReadDir(secrets)
	require.NoError(t, err)
	require.Empty(t, left, "nothing of the secrets reached the disk")
}

// TestIsolatedTaskSeesLateSecret: a file the client writes into the
// secrets dir after the task started (a re-rendered template, a renewed
// identity) shows in the running task's /secrets.
func TestIsolatedTaskSeesLateSecret(t *testing.T) {
	requireRoot(t, "isolation")
	cfg, _ := isolated(t, `echo up > /local/up
while [ ! -s /secrets/late ]; do sleep 0.02; done; cat /secrets/late`)
	secrets := clientSecrets(t, cfg.TaskDir)
	d := newDriver(t)
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	waitFile(t, filepath.Join(cfg.TaskDir, "local", "up"))

	var st unix.Stat_t
	require.NoError(t, unix.Stat(secrets, &st))
	require.Equal(t, uint32(65534), st.Uid, "the dir is the task's user's once it started")
	tmp := filepath.Join(secrets, ".late.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("rendered after the start\n"), 0o600))
	require.NoError(t, os.Lchown(tmp, int(st.Uid), int(st.Gid))) // as the client writes there
	require.NoError(t, os.Rename(tmp, filepath.Join(secrets, "late")))

	res := result(t, d, cfg.ID) // within a deadline
	out, _ := os.ReadFile(cfg.StdoutPath)
	require.True(t, res.Successful(), "task failed: %+v\n%s", res, out)
	require.Equal(t, "rendered after the start\n", string(out))
}
