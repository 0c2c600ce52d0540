package agent

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// TestTaskLogPathStaysInAllocDir: the logs backend refuses a task name or
// log type that would leave the allocation dir, naming the task, and a log
// file that a task replaced by a symlink.
func TestTaskLogPathStaysInAllocDir(t *testing.T) {
	dataDir := t.TempDir()
	db, err := clientstate.Open(filepath.Join(t.TempDir(), "state.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	a := &Agent{dataDir: dataDir, db: db}
	const id = "a1"
	db.PutAlloc(&messages.Allocation{ID: id, TaskGroup: "g", Job: &messages.Job{TaskGroups: []*messages.TaskGroup{
		{Name: "g", Tasks: []*messages.Task{{Name: "web"}, {Name: "linked"}}}}}})
	db.Flush()
	taskDir := filepath.Join(a.AllocDir(), id, "web")
	require.NoError(t, os.MkdirAll(taskDir, 0o755))
	logs := filepath.Join(a.AllocDir(), id, "alloc", "logs")
	require.NoError(t, os.MkdirAll(logs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(logs, "web.stdout.0"), []byte("out"), 0o644))
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(logs, "web.stderr"))) // a base that is a link (the reader refuses linked rotated files itself)
	require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(a.AllocDir(), id, "linked")))

	tests := []struct {
		name     string
		alloc    string
		task     string
		logType  string
		want     error  // nil: the path is returned
		contains string // in the error
	}{
		{"stdout", id, "web", "stdout", nil, ""},
		{"escaping task", id, "../../../../tmp/x-escaped-task", "stdout", ErrUnknownTask,
			`unknown task "../../../../tmp/x-escaped-task" in allocation a1`},
		{"dotdot task", id, "..", "stdout", ErrUnknownTask, `unknown task ".." in allocation a1`},
		{"dot task", id, ".", "stdout", ErrUnknownTask, `unknown task "." in allocation a1`},
		{"slash task", id, "web/../web", "stdout", ErrUnknownTask, `unknown task "web/../web"`},
		{"nul task", id, "web\x00", "stdout", ErrUnknownTask, `unknown task "web\x00"`},
		{"huge task", id, strings.Repeat("x", 1<<20), "stdout", ErrUnknownTask, "(1048576 bytes) in allocation a1"},
		{"not the alloc's task", id, "db", "stdout", ErrUnknownTask, `unknown task "db" in allocation a1`},
		{"task dir a symlink", id, "linked", "stdout", ErrUnknownTask, `unknown task "linked"`},
		{"escaping alloc", "../alloc", "web", "stdout", ErrUnknownAlloc, `unknown allocation "../alloc"`},
		{"unknown alloc", "a2", "web", "stdout", ErrUnknownAlloc, `unknown allocation "a2"`},
		{"escaping log type", id, "web", "../../../../etc/passwd", nil, "want stdout or stderr"},
		{"log a symlink", id, "web", "stderr", nil, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.TaskLogPath(tt.alloc, tt.task, tt.logType)
			if tt.contains == "" {
				require.NoError(t, err)
				require.Equal(t, filepath.Join(logs, "web."+tt.logType), p) // the base of the rotated files
				return
			}
			require.Error(t, err)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			require.Contains(t, err.Error(), tt.contains)
			require.Empty(t, p)
		})
	}
	_, err = os.Lstat("/tmp/x-escaped-task")
	require.ErrorIs(t, err, fs.ErrNotExist)
}
