package qemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/troupe-dev/troupe/runtime/driver"
	"github.com/troupe-dev/troupe/runtime/driver/exec"
	"github.com/troupe-dev/troupe/runtime/logmon"
)

// vmLogs is what qemu's shim gets as its stdout and stderr: with a logs
// block, the pipes of a log forwarder (runtime/logmon) that writes them
// rotated, StdoutPath.N and StderrPath.N; without, the log files,
// appended to.
type vmLogs struct {
	stdout, stderr *os.File
	fwd            *logmon.Forwarder // nil without rotation
}

// openLogs starts cfg's log forwarder or opens its log files.
func (d *Driver) openLogs(cfg *driver.TaskConfig) (*vmLogs, error) {
	if cfg.LogMaxFiles >= 1 && cfg.LogMaxFileSizeMB >= 1 {
		fwd, err := logmon.Start(d.cfg.LogmonPath, logmon.Spec{Stdout: cfg.StdoutPath, Stderr: cfg.StderrPath,
			Root: filepath.Dir(cfg.TaskDir), MaxFiles: cfg.LogMaxFiles,
			MaxBytes: int64(cfg.LogMaxFileSizeMB) * d.cfg.logUnit})
		if err != nil {
			return nil, err
		}
		return &vmLogs{stdout: fwd.Stdout, stderr: fwd.Stderr, fwd: fwd}, nil
	}
	stdout, err := os.OpenFile(cfg.StdoutPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	stderr, err := os.OpenFile(cfg.StderrPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		stdout.Close()
		return nil, err
	}
	return &vmLogs{stdout: stdout, stderr: stderr}, nil
}

// closeFiles closes the driver's copies of the shim's stdout and stderr
// (the shim holds its own once started).
func (l *vmLogs) closeFiles() error { return errors.Join(l.stdout.Close(), l.stderr.Close()) }

// abort ends a forwarder whose shim did not start.
func (l *vmLogs) abort() {
	if l.fwd != nil {
		_ = l.fwd.Cmd.Process.Kill()
		_ = l.fwd.Cmd.Wait()
	}
}

// record puts the forwarder's pid into the handle state.
func (l *vmLogs) record(st *handleState) {
	if l.fwd == nil {
		return
	}
	st.LogmonPid = l.fwd.Cmd.Process.Pid
	st.LogmonStartTicks, _ = exec.StartTicks(st.LogmonPid)
}

// reap waits, after the VM ended, for the forwarder to copy what is left
// and exit (at most logmon.DrainTimeout), and reaps it.
func (l *vmLogs) reap(ctx context.Context, st handleState) {
	if l.fwd == nil {
		return
	}
	if waitLogs(ctx, st) {
		_ = l.fwd.Cmd.Wait()
	}
}

// waitLogs waits, at most logmon.DrainTimeout, for st's forwarder (if
// any) to end: its logs are then complete. It reports whether it ended.
func waitLogs(ctx context.Context, st handleState) bool {
	if st.LogmonPid <= 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, logmon.DrainTimeout)
	defer cancel()
	return waitGone(ctx, st.LogmonPid, st.LogmonStartTicks)
}
