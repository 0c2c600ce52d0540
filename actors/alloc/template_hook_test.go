package alloc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestWriteTemplateStaysInTaskDir: a rendered template is written with
// its mode beneath the task directory, and never through a link the task
// planted that leads out of it.
func TestWriteTemplateStaysInTaskDir(t *testing.T) {
	taskDir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "local/conf/app.conf", Perms: "0640"}, []byte("x=1")))
	b, err := os.ReadFile(filepath.Join(taskDir, "local", "conf", "app.conf"))
	require.NoError(t, err)
	require.Equal(t, "x=1", string(b))
	fi, err := os.Stat(filepath.Join(taskDir, "local", "conf", "app.conf"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	require.NoError(t, os.Symlink(outside, filepath.Join(taskDir, "escape")))
	require.Error(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "escape/x", Perms: "0644"}, []byte("owned")))
	_, err = os.Stat(filepath.Join(outside, "x"))
	require.True(t, os.IsNotExist(err), "nothing is written outside the task dir")

	target := filepath.Join(outside, "victim")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(taskDir, "local", "link")))
	require.NoError(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "local/link", Perms: "0666"}, []byte("new")))
	b, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b), "a link at the destination is replaced, its target untouched")
	fi, err = os.Stat(target)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.Error(t, writeTemplate(taskDir, &messages.TaskTemplate{DestPath: "../../etc/x"}, []byte("x")))
}
