package driver

import (
	"context"
	"fmt"
	"io"
)

// TerminalSize is a pty's size in character cells.
type TerminalSize struct {
	Height, Width int
}

// ExecOptions is one command to run in a running task's context.
type ExecOptions struct {
	// Command is the program and its arguments; the program is looked up
	// in the task's PATH.
	Command []string
	// Tty runs the command on a new pty: Stdout gets its output (stdout
	// and stderr both) and Resize resizes it. Without Tty, Stdout and
	// Stderr get the command's own streams.
	Tty bool
	// Stdin feeds the command; nil: no input (EOF at once).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Resize carries the terminal's new sizes (Tty only); may be nil.
	Resize <-chan TerminalSize
}

// Execer is a driver that runs commands inside its running tasks (as
// `nomad alloc exec` does). It is a separate interface because not every
// driver can: a driver without it answers ErrExecNotSupported.
type Execer interface {
	// ExecTask runs opts.Command in the task's context (working dir,
	// environment, user, network namespace) and returns its exit code
	// (128+signal when a signal killed it) once it has ended and its
	// output was written. ctx's end kills it. A task that is not running
	// is a wrapped ErrTaskNotFound.
	ExecTask(ctx context.Context, taskID string, opts *ExecOptions) (int, error)
}

// ExecTask implements Execer; it always fails.
func (u Unsupported) ExecTask(context.Context, string, *ExecOptions) (int, error) {
	return -1, u.err()
}

// ExecIn runs opts in taskID through d when d is an Execer; any other
// driver is a wrapped ErrExecNotSupported.
func ExecIn(ctx context.Context, d Driver, taskID string, opts *ExecOptions) (int, error) {
	e, ok := d.(Execer)
	if !ok {
		return -1, fmt.Errorf("%w: the %s driver cannot run commands in its tasks", ErrExecNotSupported, d.Name())
	}
	return e.ExecTask(ctx, taskID, opts)
}
