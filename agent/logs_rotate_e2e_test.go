package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestExecLogsRotateAndFollow: an exec task with logs of at most 4 files
// of 1 MB prints 13 MB of numbered lines, 650 kB at a time; the files on
// disk never number more than 4 nor hold more than 1 MB (sampled while it
// writes), and Nomad's Go client following /v1/client/fs/logs from the
// start reads every line once, in order, across the rotations.
func TestExecLogsRotateAndFollow(t *testing.T) {
	const lines, maxFiles = 1_000_000, 4
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	job := nomad.NewServiceJob("logs", "logs", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	// It prints lines 0 to 999999 in 20 batches of 650 kB (seq's %g stays
	// exact below a million), each once the test has followed the one
	// before (file ack<i>): a follower more than 3 MB behind would find
	// files deleted, so the test keeps it within a batch.
	script := `i=0; while [ $i -lt 20 ]; do
			seq -f 'line %07g' $((i*50000)) $((i*50000+49999))
			while [ ! -e "$NOMAD_ALLOC_DIR/ack$i" ]; do sleep 0.01; done
			i=$((i+1))
		done
		exec sleep 1000`
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", script}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)}).
		SetLogConfig(&nomad.LogConfig{MaxFiles: ptr(maxFiles), MaxFileSizeMB: ptr(1)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "logs", "running")
	al, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	base, err := a.TaskLogPath(al.ID, "t", "stdout")
	require.NoError(t, err)

	cancel := make(chan struct{})
	defer close(cancel)
	frames, errs := c.AllocFS().Logs(al, true, "t", "stdout", "start", 0, cancel, nil)

	var got bytes.Buffer
	var files []string
	batch := 0 // the batch the task prints
	last := fmt.Sprintf("line %07d\n", lines-1)
	deadline := time.After(60 * time.Second)
	for !bytes.HasSuffix(got.Bytes(), []byte(last)) {
		select {
		case f := <-frames:
			require.NotNil(t, f, "the stream ended")
			got.Write(f.Data)
			for batch < 20 && bytes.HasSuffix(got.Bytes(), fmt.Appendf(nil, "line %07d\n", batch*50000+49999)) {
				require.NoError(t, os.WriteFile(filepath.Join(a.AllocDir(), al.ID, "alloc", fmt.Sprintf("ack%d", batch)), nil, 0o644))
				batch++
			}
			if f.File != "" && (len(files) == 0 || files[len(files)-1] != f.File) {
				files = append(files, f.File)
			}
		case err := <-errs:
			t.Fatalf("logs: %v", err)
		case <-deadline:
			t.Fatalf("only %d bytes followed in 60s", got.Len())
		}
		checkLogFiles(t, base, maxFiles, 1<<20)
	}
	require.Equal(t, maxFiles, checkLogFiles(t, base, maxFiles, 1<<20), "13 MB fill every file kept")
	want := make([]byte, 0, lines*13)
	for i := range lines {
		want = fmt.Appendf(want, "line %07d\n", i)
	}
	require.True(t, bytes.Equal(want, got.Bytes()), "every line once, in order (got %d bytes, want %d)", got.Len(), len(want))
	require.Greater(t, len(files), 10, "the stream went on across rotations: %v", files)
}

// checkLogFiles checks that the log at base has at most maxFiles files,
// each of at most max bytes, and returns how many.
func checkLogFiles(t *testing.T, base string, maxFiles int, max int64) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(base))
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), filepath.Base(base)+".")
		if _, err := strconv.Atoi(rest); !ok || err != nil {
			continue
		}
		n++
		if fi, err := e.Info(); err == nil { // nil: deleted since the listing
			require.LessOrEqual(t, fi.Size(), max, e.Name())
		}
	}
	require.LessOrEqual(t, n, maxFiles)
	return n
}
