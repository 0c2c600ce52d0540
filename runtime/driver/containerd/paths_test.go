package containerd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/safepath/safepathtest"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// TestCheckPaths: names that leave the allocation dir, a symlinked task
// dir and log files elsewhere are refused before anything is made.
func TestCheckPaths(t *testing.T) {
	top := t.TempDir()
	allocDir, sentinel := filepath.Join(top, "alloc", "a1"), filepath.Join(top, "sentinel")
	require.NoError(t, os.MkdirAll(filepath.Join(allocDir, "t"), 0o755))
	require.NoError(t, os.MkdirAll(sentinel, 0o750))
	require.NoError(t, os.Symlink(sentinel, filepath.Join(allocDir, "linked")))
	good := func() *driver.TaskConfig {
		dir := filepath.Join(allocDir, "t")
		return &driver.TaskConfig{ID: "a1/t", AllocID: "a1", TaskName: "t", TaskDir: dir,
			StdoutPath: filepath.Join(dir, "stdout"), StderrPath: filepath.Join(dir, "stderr")}
	}
	tests := []struct {
		name   string
		change func(c *driver.TaskConfig)
		ok     bool
	}{
		{"good", func(*driver.TaskConfig) {}, true},
		{"no task dir, no logs", func(c *driver.TaskConfig) { c.TaskDir, c.StdoutPath, c.StderrPath = "", "", "" }, true},
		{"escaping task", func(c *driver.TaskConfig) { c.TaskName = "../../../../tmp/x-escaped-task" }, false},
		{"dotdot task", func(c *driver.TaskConfig) { c.TaskName = ".." }, false},
		{"dot alloc", func(c *driver.TaskConfig) { c.AllocID = "." }, false},
		{"slash task", func(c *driver.TaskConfig) { c.TaskName = "a/b" }, false},
		{"nul task", func(c *driver.TaskConfig) { c.TaskName = "a\x00b" }, false},
		{"huge task", func(c *driver.TaskConfig) { c.TaskName = strings.Repeat("x", 1<<20) }, false},
		{"task dir a symlink", func(c *driver.TaskConfig) { c.TaskDir = filepath.Join(allocDir, "linked") }, false},
		{"task dir not clean", func(c *driver.TaskConfig) { c.TaskDir = allocDir + "/t/../t" }, false},
		{"log outside", func(c *driver.TaskConfig) { c.StdoutPath = filepath.Join(sentinel, "out") }, false},
		{"logs without task dir", func(c *driver.TaskConfig) { c.TaskDir = "" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good()
			tt.change(cfg)
			err := checkPaths(cfg)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, driver.ErrInvalidConfig)
		})
	}
}

// TestCreateLogFilesRefusesLinks: a log file planted as a symlink is not
// followed (the shim, root, would append to its target).
func TestCreateLogFilesRefusesLinks(t *testing.T) {
	top := t.TempDir()
	dir, sentinel := filepath.Join(top, "alloc", "a1", "t"), filepath.Join(top, "sentinel")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(sentinel, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(sentinel, "keep"), []byte("keep"), 0o600))
	cfg := &driver.TaskConfig{ID: "a1/t", AllocID: "a1", TaskName: "t", TaskDir: dir,
		StdoutPath: filepath.Join(dir, "stdout"), StderrPath: filepath.Join(dir, "stderr")}

	require.NoError(t, createLogFiles(cfg))
	require.FileExists(t, cfg.StdoutPath)
	require.FileExists(t, cfg.StderrPath)

	require.NoError(t, os.Remove(cfg.StderrPath))
	require.NoError(t, os.Symlink(filepath.Join(sentinel, "keep"), cfg.StderrPath))
	before := safepathtest.Tree(t, sentinel)
	require.ErrorIs(t, createLogFiles(cfg), safepath.ErrSymlink)
	require.Equal(t, before, safepathtest.Tree(t, sentinel))
}
