package alloc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// mountsBelow lists this namespace's mount points below dir.
func mountsBelow(t *testing.T, dir string) []string {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

// TestAllocDirSecretsTmpfs: with SecretsTmpfs every task's secrets dir is
// a tmpfs of its own (0700), held; a second setup (an agent restart over
// running tasks) mounts none twice and a restored hook holds them; the
// postrun unmounts them all: what was written there never was on the
// disk, and no mount is left under the alloc dir.
func TestAllocDirSecretsTmpfs(t *testing.T) {
	needRoot(t)
	root := t.TempDir()
	a := testAlloc("service", map[string]any{}, nil)
	groupOf(a).Tasks = append(groupOf(a).Tasks, &messages.Task{Name: "side", Driver: "exec"})
	dirs := (&AllocDirHook{Root: root}).secretsDirs(a)
	t.Cleanup(func() {
		for _, d := range dirs {
			_ = unix.Unmount(d, unix.MNT_DETACH)
		}
	})

	h := &AllocDirHook{Root: root, SecretsTmpfs: true}
	require.False(t, h.holding())
	require.NoError(t, h.Prerun(t.Context(), a))
	require.True(t, h.holding())
	for _, d := range dirs {
		var fs unix.Statfs_t
		require.NoError(t, unix.Statfs(d, &fs))
		require.Equal(t, int64(unix.TMPFS_MAGIC), int64(fs.Type), d)
		fi, err := os.Stat(d)
		require.NoError(t, err)
		require.Equal(t, os.ModeDir|0o700, fi.Mode(), d)
		require.NoError(t, os.WriteFile(filepath.Join(d, "nomad_token"), []byte("jwt"), 0o600))
	}
	require.ElementsMatch(t, dirs, mountsBelow(t, root))

	again := &AllocDirHook{Root: root, SecretsTmpfs: true}
	again.Restore(&clientstate.StoredAlloc{Alloc: a})
	require.True(t, again.holding(), "a restored allocation holds its mounted secrets")
	require.NoError(t, again.Prerun(t.Context(), a))
	require.ElementsMatch(t, dirs, mountsBelow(t, root), "not mounted twice")
	require.FileExists(t, filepath.Join(dirs[0], "nomad_token"), "the tasks keep what they see")

	require.NoError(t, again.Postrun(t.Context(), a))
	require.False(t, again.holding())
	require.Empty(t, mountsBelow(t, root), "no tmpfs left under the alloc dir")
	for _, d := range dirs {
		left, err := os.ReadDir(d)
		require.NoError(t, err)
		require.Empty(t, left, "nothing reached the disk")
	}
	gone := &AllocDirHook{Root: root, SecretsTmpfs: true}
	gone.Restore(&clientstate.StoredAlloc{Alloc: a})
	require.False(t, gone.holding(), "nothing to tear down")
	require.NoError(t, gone.Postrun(t.Context(), a), "a second teardown is done")
}

// TestSecretsFilesTakeTheDirsOwner: the client's files in a secrets dir
// (an identity, a template) take the dir's owner, the task's user once
// it started, unless the template names its own; elsewhere they stay
// the agent's.
func TestSecretsFilesTakeTheDirsOwner(t *testing.T) {
	needRoot(t)
	taskDir := t.TempDir()
	secrets := filepath.Join(taskDir, secretsDirName)
	require.NoError(t, os.Mkdir(secrets, 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(taskDir, localDirName), 0o777))
	require.NoError(t, os.Chown(secrets, 65534, 65533))
	owner := func(rel string) [2]uint32 {
		fi, err := os.Lstat(filepath.Join(taskDir, rel))
		require.NoError(t, err, rel)
		st := fi.Sys().(*syscall.Stat_t)
		return [2]uint32{st.Uid, st.Gid}
	}

	require.NoError(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "secrets/db.env", Perms: "0600"}, []byte("x")))
	require.Equal(t, [2]uint32{65534, 65533}, owner("secrets/db.env"))
	uid := int32(7)
	require.NoError(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "secrets/own.env", Uid: &uid}, []byte("x")))
	require.Equal(t, [2]uint32{7, 65533}, owner("secrets/own.env"), "the template's uid wins")
	require.NoError(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "local/app.conf"}, []byte("x")))
	require.Equal(t, [2]uint32{0, 0}, owner("local/app.conf"))

	task := &messages.Task{Name: "t", Identity: &messages.TaskIdentity{File: true}}
	require.NoError(t, writeIdentityFiles(taskDir, task, map[string]string{defaultIdentity: "jwt"}))
	require.Equal(t, [2]uint32{65534, 65533}, owner("secrets/nomad_token"))
	fi, err := os.Stat(filepath.Join(secrets, "nomad_token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(identityFilePerm), fi.Mode().Perm())
}
