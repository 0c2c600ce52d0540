//go:build linux

package containerd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/logmon/logmontest"
)

// logUnit is the tests' "MB" of max_file_size: 1 KiB.
const logUnit = 1 << 10

// printLines prints "line <from>" .. "line <to>" on stdout, pausing 20 ms
// every 100 lines: the max_files kept hold about half a second of them,
// time enough for a follower on a busy host to keep up.
func printLines(from, to int) string {
	return `i=` + strconv.Itoa(from) + `; while [ $i -le ` + strconv.Itoa(to) + ` ]; do echo line $i; ` +
		`if [ $((i % 100)) -eq 0 ]; then usleep 20000; fi; i=$((i+1)); done; `
}

// TestLogsRotateAcrossAgentRestart: a task with a logs block writes
// through the forwarder the shim runs (its child, not the agent's): the
// lines it prints while no driver runs are rotated too, the logs end in
// at most max_files files of at most max_file_size holding the newest
// lines, a follower reading from the start saw every line once, in order,
// and deleting the task ends the forwarder.
func TestLogsRotateAcrossAgentRestart(t *testing.T) {
	e := setupEnv(t)
	newDriver := func() *Driver {
		d := New(Config{Address: e.daemon.Address(), Namespace: e.daemon.Namespace(), Logger: testLogger(t),
			RequestTimeout: 20 * time.Second, logUnit: logUnit})
		t.Cleanup(d.Shutdown)
		return d
	}
	d1 := newDriver()
	// about 58 KB of lines: 8 files of 8 KB, of which 3 are kept
	cfg := e.taskConfig(t, printLines(1, 3000)+`echo err >&2; while [ ! -e /local/stop ]; do usleep 20000; done; `+
		printLines(3001, 6000)+`exit 0`)
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 3, 8
	const maxBytes = 8 * logUnit
	follow := logmontest.Follow(cfg.StdoutPath, "line 6000\n")
	defer follow.Stop()
	h := e.start(t, d1, cfg)
	follow.Until(t, "line 3000\n", time.Minute)

	fwd := forwarderOf(t, cfg.StdoutPath)
	require.NotZero(t, fwd, "a logmon process writes the task's logs")
	require.NotEqual(t, os.Getpid(), parentOf(t, fwd), "the forwarder is the shim's child, not the agent's")
	require.NoFileExists(t, cfg.StdoutPath, "the logs are rotated files, base.N")

	d1.Shutdown() // the agent stops; the task and its forwarder go on
	stopFile(t, cfg)
	follow.Until(t, "line 6000\n", time.Minute)

	d2 := newDriver()
	require.NoError(t, d2.RecoverTask(context.Background(), h))
	r := result(t, d2, cfg.ID)
	require.NoError(t, r.Err)
	require.Equal(t, 0, r.ExitCode)

	all := logmontest.Lines(1, 6000)
	require.Equal(t, all, follow.Wait(t, time.Minute), "the follower saw every line once, in order")
	kept := logmontest.CheckFiles(t, cfg.StdoutPath, 3, 3, maxBytes)
	require.True(t, strings.HasSuffix(all, kept) && strings.HasPrefix(kept, "line "),
		"the files hold the newest lines, whole: %q...", kept[:min(len(kept), 40)])
	require.Equal(t, "err\n", logmontest.CheckFiles(t, cfg.StderrPath, 1, 1, maxBytes))

	require.NoError(t, d2.DestroyTask(context.Background(), cfg.ID, false))
	require.Eventually(t, func() bool { return forwarderOf(t, cfg.StdoutPath) == 0 }, 20*time.Second,
		10*time.Millisecond, "the forwarder ends with its task")
}

// TestLogsRotateRefusesBadLogDir: a log the forwarder could not write
// fails the start, before any container is made.
func TestLogsRotateRefusesBadLogDir(t *testing.T) {
	e := setupEnv(t)
	d := e.newDriver(t)
	cfg := e.taskConfig(t, "echo hi")
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 2, 1
	require.NoError(t, os.Symlink("/etc/passwd", cfg.StdoutPath+".0"))
	_, err := d.StartTask(context.Background(), cfg)
	require.ErrorIs(t, err, ErrTaskStart)
	require.NotContains(t, e.containers(t), ContainerID(cfg.ID))
}

// forwarderOf is the pid of the logmon process that writes the log at
// base, 0 when none runs.
func forwarderOf(t *testing.T, base string) int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 2 && args[1] == "logmon" && strings.Contains(args[2], strconv.Quote(base)) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

// parentOf is pid's parent pid.
func parentOf(t *testing.T, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
	ppid, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	return ppid
}
