//go:build linux

package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// rotatedLog reads every file of the rotated log at base, oldest first,
// and checks each is within max bytes and there are at most maxFiles.
func rotatedLog(t *testing.T, base string, maxFiles int, max int64) (content string, highest int) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(base))
	require.NoError(t, err)
	var idx []int
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), filepath.Base(base)+"."); ok {
			n, err := strconv.Atoi(rest)
			require.NoError(t, err, e.Name())
			idx = append(idx, n)
		}
	}
	require.NotEmpty(t, idx)
	require.LessOrEqual(t, len(idx), maxFiles, "files %v", idx)
	var b strings.Builder
	for i, n := range idx { // ReadDir sorts by name: fine below 10
		if i > 0 {
			require.Equal(t, idx[i-1]+1, n, "no gap in %v", idx)
		}
		data, err := os.ReadFile(fmt.Sprintf("%s.%d", base, n))
		require.NoError(t, err)
		require.LessOrEqual(t, int64(len(data)), max, "%s.%d", base, n)
		b.Write(data)
	}
	return b.String(), idx[len(idx)-1]
}

// checkLines checks that s is numbered lines, consecutive, ending with
// last. The first may be the end of a line whose start was in a deleted
// file: a write that ends mid-line near the end of a file gets the rest
// of the line in the next file.
func checkLines(t *testing.T, s string, last int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "line ") {
		lines = lines[1:]
	}
	first, err := strconv.Atoi(strings.TrimPrefix(lines[0], "line "))
	require.NoError(t, err, "the oldest kept file starts with a whole line: %q", lines[0])
	for i, l := range lines {
		require.Equal(t, fmt.Sprintf("line %07d", first+i), l)
	}
	require.Equal(t, last, first+len(lines)-1)
}

// TestLogsRotateWhileAgentIsDown: an exec task with logs of at most 3
// files of 1 MB prints 5 MB while no agent runs; the executor rotates
// them: 3 files of at most 1 MB, holding the newest lines whole and in
// order. A restarted agent re-attaches and the task's further output
// goes on in the same rotation.
func TestLogsRotateWhileAgentIsDown(t *testing.T) {
	a := newDriver(t)
	dir := t.TempDir()
	cfg := shellConfig(dir, "alloc/"+t.Name(),
		`while [ ! -e go1 ]; do sleep 0.01; done; seq -f 'line %07g' 1 400000; echo oops >&2; touch done1
		 while [ ! -e go2 ]; do sleep 0.01; done; seq -f 'line %07g' 400001 500000; touch done2; exec sleep 1000`)
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 3, 1
	h, err := a.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	a.Shutdown() // the agent goes away

	require.NoError(t, os.WriteFile(filepath.Join(dir, "go1"), nil, 0o644))
	waitFile(t, filepath.Join(dir, "done1"))
	// The shell has written its last line; the pump may still copy it.
	var out string
	var highest int
	require.Eventually(t, func() bool {
		out, highest = rotatedLog(t, cfg.StdoutPath, 3, 1<<20)
		return strings.HasSuffix(out, "line 0400000\n")
	}, 10*time.Second, 10*time.Millisecond)
	require.GreaterOrEqual(t, highest, 4, "5.2 MB in files of 1 MB")
	checkLines(t, out, 400000)
	errLog, _ := rotatedLog(t, cfg.StderrPath, 3, 1<<20)
	require.Equal(t, "oops\n", errLog)
	_, err = os.Stat(cfg.StdoutPath)
	require.ErrorIs(t, err, os.ErrNotExist, "no unrotated file")

	b := newDriver(t)
	require.NoError(t, b.RecoverTask(context.Background(), roundTrip(t, h)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go2"), nil, 0o644))
	waitFile(t, filepath.Join(dir, "done2"))
	var after int
	require.Eventually(t, func() bool {
		out, after = rotatedLog(t, cfg.StdoutPath, 3, 1<<20)
		return strings.HasSuffix(out, "line 0500000\n")
	}, 10*time.Second, 10*time.Millisecond)
	require.Greater(t, after, highest, "the same rotation goes on")
	checkLines(t, out, 500000)
}

// TestLogsCompleteAtExit: when a task's exit result comes, everything it
// printed is in its log files already.
func TestLogsCompleteAtExit(t *testing.T) {
	d := newDriver(t)
	cfg := shellConfig(t.TempDir(), "alloc/"+t.Name(), `seq -f 'line %07g' 1 200000; exit 3`)
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 10, 1
	h, err := d.StartTask(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { killTask(t, h) })
	res := result(t, d, h.TaskID)
	require.Equal(t, 3, res.ExitCode)
	out, highest := rotatedLog(t, cfg.StdoutPath, 10, 1<<20)
	require.Equal(t, 2, highest, "2.6 MB: files 0, 1 and 2")
	checkLines(t, out, 200000)
}

// TestLogSpec: a task config without log settings keeps the plain files.
func TestLogSpec(t *testing.T) {
	require.Nil(t, logSpecOf(&driver.TaskConfig{}))
	require.Nil(t, logSpecOf(&driver.TaskConfig{LogMaxFiles: 2}))
	require.Equal(t, &logSpec{MaxFiles: 2, MaxFileBytes: 3 << 20},
		logSpecOf(&driver.TaskConfig{LogMaxFiles: 2, LogMaxFileSizeMB: 3}))
}
