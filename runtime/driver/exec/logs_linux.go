package exec

import (
	"fmt"
	"os"
	"time"

	"github.com/troupe-dev/troupe/runtime/logrotate"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// pumpDrainTimeout bounds how long the executor, once the task and its
// process group are gone, waits for the pumps to copy what is left in
// the pipes: a process that left the group may hold a pipe open for ever.
const pumpDrainTimeout = 5 * time.Second

// taskLogs hands the task its stdout and stderr. With a logSpec, each is
// the write end of a pipe whose read end a pump in the executor copies
// into rotated files, so that rotation goes on while the agent is down
// (the executor outlives it) and a restarted agent changes nothing;
// without, the log file itself, appended to.
type taskLogs struct {
	spec  *executorSpec
	pumps []chan struct{} // closed when a pump has copied all
}

func newTaskLogs(spec *executorSpec) *taskLogs { return &taskLogs{spec: spec} }

// open returns the file the task writes the log at path to; the caller
// closes it once the task has started (the task holds its own copy). The
// rotated files are opened beneath the spec's root, refusing symlinks.
func (l *taskLogs) open(path string) (*os.File, error) {
	if l.spec.Logs == nil || path == os.DevNull {
		return openLog(l.spec, path, 0o644)
	}
	root := l.spec.root()
	w, err := logrotate.NewWriter(path, logrotate.Options{
		MaxFiles: l.spec.Logs.MaxFiles, MaxBytes: l.spec.Logs.MaxFileBytes,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			return safepath.OpenFile(root, name, flag, perm)
		},
		Remove: func(name string) error { return safepath.RemoveAll(root, name) },
	})
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, err
	}
	done := make(chan struct{})
	l.pumps = append(l.pumps, done)
	go func() {
		defer close(done)
		if err := logrotate.Pump(pr, w); err != nil {
			fmt.Fprintf(os.Stderr, "executor: log %s: %v\n", path, err)
		}
		pr.Close()
		if err := w.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "executor: log %s: %v\n", path, err)
		}
	}()
	return pw, nil
}

// wait waits, up to pumpDrainTimeout, for the pumps to copy everything
// the task wrote, so that its logs are complete before its exit status is.
func (l *taskLogs) wait() {
	timeout := time.NewTimer(pumpDrainTimeout)
	defer timeout.Stop()
	for _, done := range l.pumps {
		select {
		case <-done:
		case <-timeout.C:
			fmt.Fprintf(os.Stderr, "executor: logs still open %v after the task ended; not waiting\n", pumpDrainTimeout)
			return
		}
	}
}
