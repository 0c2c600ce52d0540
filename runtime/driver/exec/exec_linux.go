package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/creack/pty"

	"github.com/troupe-dev/troupe/runtime/driver"
)

var _ driver.Execer = (*Driver)(nil)

// ExecTask implements driver.Execer: it runs a command as the task runs,
// from the task's spec (its working dir, environment, user and network
// namespace), in a process group of its own (a session of its own on a
// pty) so that ctx's end kills it and whatever it started.
func (d *Driver) ExecTask(ctx context.Context, taskID string, opts *driver.ExecOptions) (int, error) {
	if opts == nil || len(opts.Command) == 0 || opts.Command[0] == "" {
		return -1, fmt.Errorf("%w: %s: exec needs a command", driver.ErrInvalidConfig, taskID)
	}
	t, err := d.tasks.Get(taskID)
	if err != nil {
		return -1, err
	}
	if t.Exited() {
		return -1, fmt.Errorf("%w: %s has exited", driver.ErrTaskNotFound, taskID)
	}
	var spec executorSpec
	if err := readJSON(filepath.Join(t.Data.StateDir, specFile), &spec); err != nil {
		return -1, fmt.Errorf("exec: %s: reading the task's spec: %w", taskID, err)
	}
	var cmd *osexec.Cmd
	if spec.Isolation != nil {
		cmd = d.enterCommand(t.Handle.Pid, t.Data.StateDir, opts.Command)
	} else {
		cmd, err = execCommand(&spec, opts.Command)
	}
	if err != nil {
		return -1, fmt.Errorf("exec: %s: %w", taskID, err)
	}
	d.log.Info("exec in task", "task", taskID, "command", opts.Command[0], "tty", opts.Tty)
	if opts.Tty {
		return runOnPty(ctx, cmd, &spec, opts)
	}
	return runPiped(ctx, cmd, &spec, opts)
}

// execCommand builds the command as taskCommand builds the task's, but
// without touching this process's environment: the program is looked up
// in the task's PATH.
func execCommand(spec *executorSpec, argv []string) (*osexec.Cmd, error) {
	path := argv[0]
	if !strings.Contains(path, "/") {
		lp, err := lookPath(path, envValue(spec.Env, "PATH"))
		if err != nil {
			return nil, err
		}
		path = lp
	}
	cred, err := credential(spec.User)
	if err != nil {
		return nil, err
	}
	cmd := osexec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	return cmd, nil
}

// lookPath finds an executable name in a PATH list.
func lookPath(name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q not found in the task's PATH", osexec.ErrNotFound, name)
}

// runPiped runs cmd with opts' streams as its own.
func runPiped(ctx context.Context, cmd *osexec.Cmd, spec *executorSpec, opts *driver.ExecOptions) (int, error) {
	cmd.Stdout, cmd.Stderr = opts.Stdout, opts.Stderr
	// Not cmd.Stdin: Wait would wait for a stdin that may never end.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return -1, err
	}
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	if err := startInNetns(spec.NetnsPath, cmd.Start); err != nil {
		return -1, err
	}
	go copyStdin(stdin, opts.Stdin)
	return waitCommand(ctx, cmd)
}

// runOnPty runs cmd as the leader of a new session whose controlling
// terminal is a new pty; stdin is copied to the pty and its output to
// opts.Stdout until the command ends.
func runOnPty(ctx context.Context, cmd *osexec.Cmd, spec *executorSpec, opts *driver.ExecOptions) (int, error) {
	// An isolated task's enter process leaves the terminal to its child,
	// whose session lies in the task's pid namespace (enter_linux.go).
	attrs := &syscall.SysProcAttr{Setsid: true, Setctty: spec.Isolation == nil, Credential: cmd.SysProcAttr.Credential}
	var ptmx *os.File
	err := startInNetns(spec.NetnsPath, func() error {
		var err error
		ptmx, err = pty.StartWithAttrs(cmd, nil, attrs)
		return err
	})
	if err != nil {
		return -1, err
	}
	// The resize loop uses the pty's fd: it ends before the pty closes.
	stop, resized := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(resized)
		resizeLoop(ptmx, opts.Resize, stop)
	}()
	defer func() {
		close(stop)
		<-resized
		_ = ptmx.Close()
	}()
	if opts.Stdin != nil {
		go func() { _, _ = io.Copy(ptmx, opts.Stdin) }()
	}
	out := opts.Stdout
	if out == nil {
		out = io.Discard
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		// Once the session ends, reads fail with EIO: all output is read.
		_, _ = io.Copy(out, ptmx)
	}()
	code, err := waitCommand(ctx, cmd)
	<-copied
	return code, err
}

// resizeLoop applies the sizes from sizes to the pty until stop closes.
func resizeLoop(ptmx *os.File, sizes <-chan driver.TerminalSize, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case sz, ok := <-sizes:
			if !ok {
				return
			}
			_ = pty.Setsize(ptmx, &pty.Winsize{Rows: clampU16(sz.Height), Cols: clampU16(sz.Width)})
		}
	}
}

func clampU16(n int) uint16 { return uint16(min(max(n, 0), 0xffff)) }

// copyStdin copies in (nil: nothing) to the command's stdin and closes it
// at in's end, so the command sees EOF.
func copyStdin(w io.WriteCloser, in io.Reader) {
	if in != nil {
		_, _ = io.Copy(w, in)
	}
	_ = w.Close()
}

// waitCommand waits for cmd, killing its process group when ctx ends
// first, kills what is left of the group once it has exited (its pid is
// not reaped yet, so the group id cannot have been reused), and encodes
// its exit status as the task's (128+signal for a signal death).
func waitCommand(ctx context.Context, cmd *osexec.Cmd) (int, error) {
	pgid := cmd.Process.Pid
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		case <-done:
		}
	}()
	waitUnreaped(pgid)
	close(done)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	err := cmd.Wait()
	var ee *osexec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1, err
	}
	return exitStatus(cmd.ProcessState).ExitCode, nil
}
