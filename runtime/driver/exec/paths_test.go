//go:build linux

package exec

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/safepath/safepathtest"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// hostDirs makes <top>/data/alloc/a1 (an allocation dir) and
// <top>/sentinel with a file in it.
func hostDirs(t *testing.T) (top, allocDir, sentinel string) {
	t.Helper()
	top = t.TempDir()
	allocDir, sentinel = filepath.Join(top, "data", "alloc", "a1"), filepath.Join(top, "sentinel")
	require.NoError(t, os.MkdirAll(allocDir, 0o755))
	require.NoError(t, os.MkdirAll(sentinel, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(sentinel, "keep"), []byte("keep"), 0o640))
	return top, allocDir, sentinel
}

// TestUnsafeNamesStartNothing: a task config built, as the client used to,
// from a task name or allocation ID that is not one path element is
// refused before anything is made: nothing appears beside or in the data
// dir, nor in /tmp.
func TestUnsafeNamesStartNothing(t *testing.T) {
	names := []string{"../../../../tmp/x-escaped-task", "..", ".", "a/b", "a\x00b",
		strings.Repeat("x", 1<<20), "../../../sentinel/planted"}
	for _, field := range []string{"task", "alloc"} {
		for i, name := range names {
			t.Run(fmt.Sprintf("%s/%d", field, i), func(t *testing.T) {
				top, allocDir, _ := hostDirs(t)
				d := newDriver(t)
				task, alloc := name, "a1"
				dir := filepath.Join(allocDir, task)
				if field == "alloc" {
					task, alloc = "t", name
					dir = filepath.Join(filepath.Dir(allocDir), alloc, task)
				}
				cfg := shellConfig(dir, alloc+"/"+task, "echo escaped")
				cfg.TaskName, cfg.AllocID = task, alloc
				cfg.StdoutPath, cfg.StderrPath = filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
				before := safepathtest.Tree(t, top)

				_, err := d.StartTask(context.Background(), cfg)

				require.ErrorIs(t, err, driver.ErrInvalidConfig)
				require.Equal(t, before, safepathtest.Tree(t, top), "nothing made")
				_, err = os.Lstat("/tmp/x-escaped-task")
				require.ErrorIs(t, err, fs.ErrNotExist)
			})
		}
	}
}

// TestLogsOutsideAllocDirRefused: log files must lie beneath the
// allocation dir.
func TestLogsOutsideAllocDirRefused(t *testing.T) {
	top, allocDir, sentinel := hostDirs(t)
	dir := filepath.Join(allocDir, "t")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cfg := shellConfig(dir, "a1/t", "echo out")
	cfg.StdoutPath = filepath.Join(sentinel, "keep")
	before := safepathtest.Tree(t, top)
	_, err := newDriver(t).StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, driver.ErrInvalidConfig)
	require.Equal(t, before, safepathtest.Tree(t, top))
}

// TestPlantedSymlinksNotFollowed: symlinks planted in the allocation dir
// before the task starts do not lead the driver or its executor (root)
// out: the link's target keeps its contents and mode.
func TestPlantedSymlinksNotFollowed(t *testing.T) {
	tests := []struct {
		name   string
		link   string // relative to the task dir; "." is the task dir itself
		toFile bool   // the link points at the sentinel's file, else the sentinel dir
		want   error  // nil: the task runs
	}{
		{"task dir", ".", false, driver.ErrInvalidConfig},
		{"stdout", "stdout", true, ErrTaskStart},
		{"stderr", "stderr", true, ErrTaskStart},
		{"executor dir", stateDirName, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, allocDir, sentinel := hostDirs(t)
			dir := filepath.Join(allocDir, "t")
			if tt.link != "." {
				require.NoError(t, os.Mkdir(dir, 0o755))
			}
			target := sentinel
			if tt.toFile {
				target = filepath.Join(sentinel, "keep")
			}
			require.NoError(t, os.Symlink(target, filepath.Join(dir, tt.link)))
			cfg := shellConfig(dir, "a1/t", "echo out; echo err >&2")
			cfg.StdoutPath, cfg.StderrPath = filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
			before := safepathtest.Tree(t, sentinel)
			d := newDriver(t)

			h, err := d.StartTask(context.Background(), cfg)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			} else {
				require.NoError(t, err)
				t.Cleanup(func() { killTask(t, h) })
				require.Equal(t, "out\n", waitFile(t, cfg.StdoutPath))
				fi, err := os.Lstat(filepath.Join(dir, stateDirName))
				require.NoError(t, err)
				require.True(t, fi.IsDir(), "the link was replaced by the executor's own dir")
			}
			require.Equal(t, before, safepathtest.Tree(t, sentinel), "the link's target is untouched")
		})
	}
}
