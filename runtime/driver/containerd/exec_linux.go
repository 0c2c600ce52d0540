package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// execStartFailed is the exit code of an exec that never ran: the runtime
// could not start the command (as docker exec answers, and the exec
// driver).
const execStartFailed = 126

// ioDrainTimeout bounds the wait for an exec's output once it has exited:
// a child it left running in the background may hold its stdout open.
const ioDrainTimeout = 5 * time.Second

// ExecTask implements driver.Execer: it runs the command as a process of
// the task's container (runc exec), with the container's user, env,
// working dir, capabilities and namespaces, the command as Args, on a pty
// when opts.Tty. ctx's end kills the process (SIGKILL); its children that
// outlive it stay in the container. A command that the runtime cannot
// start (not found in the image) answers 126 with the runtime's message
// on stderr.
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
	ctx, _, err = d.conn(ctx)
	if err != nil {
		return -1, err
	}
	spec, err := t.Data.container.Spec(ctx)
	if err != nil {
		return -1, d.execError(ctx, t, "reading the container's spec", err)
	}
	if spec.Process == nil {
		return -1, fmt.Errorf("containerd: %s: the container's spec has no process", taskID)
	}
	e := &execution{d: d, t: t, opts: opts, id: newExecID(),
		started: make(chan struct{}), failed: make(chan struct{})}
	d.log.Info("exec in task", "task", taskID, "exec", e.id, "command", opts.Command[0], "tty", opts.Tty)
	return e.run(ctx, execProcessSpec(spec.Process, opts))
}

// execProcessSpec is the container's process spec with the command as its
// Args, on a terminal when opts.Tty.
func execProcessSpec(p *specs.Process, opts *driver.ExecOptions) *specs.Process {
	ps := *p
	ps.Args = append([]string(nil), opts.Command...)
	ps.Terminal = opts.Tty
	ps.ConsoleSize = nil
	return &ps
}

// execution is one ExecTask call's process and its streams.
type execution struct {
	d    *Driver
	t    *task
	opts *driver.ExecOptions
	id   string
	proc client.Process
	// started closes once the process runs, failed when it never will:
	// the stdin reader waits for one of them before it closes stdin.
	started, failed chan struct{}
}

// run creates, starts and waits for the process; ctx carries the
// driver's namespace.
func (e *execution) run(ctx context.Context, ps *specs.Process) (int, error) {
	proc, err := e.t.Data.task.Exec(ctx, e.id, ps, cio.NewCreator(e.streams()...))
	if err != nil {
		close(e.failed)
		return -1, e.d.execError(ctx, e.t, "creating the exec process", err)
	}
	e.proc = proc
	// Wait before Start, so that a quick exit is not missed; the wait
	// outlives ctx, whose end kills the process and then reaps it.
	waitCtx, stopWait := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWait()
	exited, err := proc.Wait(waitCtx)
	if err != nil {
		close(e.failed)
		e.remove(ctx)
		return -1, e.d.execError(ctx, e.t, "waiting for the exec process", err)
	}
	if err := proc.Start(ctx); err != nil {
		close(e.failed)
		e.remove(ctx)
		werr := e.d.execError(ctx, e.t, "starting the exec process", err)
		if errors.Is(werr, driver.ErrTaskNotFound) || ctx.Err() != nil || errdefs.IsUnavailable(err) {
			return -1, werr
		}
		// The runtime refused the command (not found, not executable).
		e.stderr(fmt.Sprintf("%s: %v\n", e.opts.Command[0], err))
		return execStartFailed, nil
	}
	close(e.started)
	stopResize := make(chan struct{})
	resized := make(chan struct{})
	go func() {
		defer close(resized)
		e.resizeLoop(ctx, stopResize)
	}()
	var st client.ExitStatus
	select {
	case st = <-exited:
	case <-ctx.Done():
		e.kill(ctx)
		st = <-exited
	}
	close(stopResize)
	<-resized
	e.drain(ctx)
	e.remove(ctx)
	if err := st.Error(); err != nil {
		return -1, fmt.Errorf("containerd: %s: exec %s: %w", e.t.ID, e.id, err)
	}
	return int(st.ExitCode()), nil
}

// streams are the cio options: stdin (EOF closes the process's stdin; on
// a pty nothing, as closing it would hang the terminal up), and stdout
// and stderr, or one stream on a pty.
func (e *execution) streams() []cio.Opt {
	stdout, stderr := orDiscard(e.opts.Stdout), orDiscard(e.opts.Stderr)
	if e.opts.Tty {
		return []cio.Opt{cio.WithStreams(e.opts.Stdin, stdout, nil), cio.WithTerminal}
	}
	in := e.opts.Stdin
	if in == nil {
		in = strings.NewReader("")
	}
	return []cio.Opt{cio.WithStreams(&stdinCloser{r: in, onEOF: e.closeStdin}, stdout, stderr)}
}

// closeStdin closes the process's stdin once it runs: the shim keeps the
// stdin FIFO open until it is told to.
func (e *execution) closeStdin() {
	select {
	case <-e.started:
	case <-e.failed:
		return
	}
	ctx, cancel := e.cleanupContext(context.Background())
	defer cancel()
	if err := e.proc.CloseIO(ctx, client.WithStdinCloser); err != nil && !errdefs.IsNotFound(err) {
		e.d.log.Debug("closing an exec's stdin", "task", e.t.ID, "exec", e.id, "err", err)
	}
}

// resizeLoop applies opts.Resize's sizes to the pty until stop closes.
func (e *execution) resizeLoop(ctx context.Context, stop <-chan struct{}) {
	if !e.opts.Tty || e.opts.Resize == nil {
		return
	}
	for {
		select {
		case <-stop:
			return
		case sz, ok := <-e.opts.Resize:
			if !ok {
				return
			}
			rctx, cancel := e.cleanupContext(ctx)
			err := e.proc.Resize(rctx, uint32(max(sz.Width, 0)), uint32(max(sz.Height, 0)))
			cancel()
			if err != nil {
				e.d.log.Debug("resizing an exec's pty", "task", e.t.ID, "exec", e.id, "err", err)
			}
		}
	}
}

// kill sends SIGKILL to the process; one that has exited is no error.
func (e *execution) kill(ctx context.Context) {
	kctx, cancel := e.cleanupContext(ctx)
	defer cancel()
	if err := e.proc.Kill(kctx, syscall.SIGKILL); err != nil && !errdefs.IsNotFound(err) {
		e.d.log.Warn("killing an exec process", "task", e.t.ID, "exec", e.id, "err", err)
	}
}

// drain waits, for a while, until the process's output is copied: the
// shim closes the FIFOs once the process and what shares its output have
// closed them.
func (e *execution) drain(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.proc.IO().Wait()
	}()
	timer := time.NewTimer(ioDrainTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		e.d.log.Warn("exec output still open after its exit; dropping the rest", "task", e.t.ID, "exec", e.id)
	case <-ctx.Done():
	}
}

// remove deletes the process from the task (which closes its streams);
// when containerd cannot, the streams are closed here.
func (e *execution) remove(ctx context.Context) {
	dctx, cancel := e.cleanupContext(ctx)
	defer cancel()
	if _, err := e.proc.Delete(dctx); err != nil {
		if !errdefs.IsNotFound(err) {
			e.d.log.Warn("deleting an exec process", "task", e.t.ID, "exec", e.id, "err", err)
		}
		if pio := e.proc.IO(); pio != nil {
			pio.Cancel()
			_ = pio.Close()
		}
	}
}

// stderr writes msg to the exec's stderr (its stdout on a pty).
func (e *execution) stderr(msg string) {
	w := e.opts.Stderr
	if e.opts.Tty {
		w = e.opts.Stdout
	}
	if w != nil {
		_, _ = io.WriteString(w, msg)
	}
}

// cleanupContext is ctx's values without its end, bounded by the driver's
// request timeout: for the calls that must run after ctx has ended.
func (e *execution) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), e.d.cfg.RequestTimeout)
}

// execError wraps err of an exec into t: a wrapped driver.ErrTaskNotFound
// when containerd no longer has the task or it is not running.
func (d *Driver) execError(ctx context.Context, t *task, what string, err error) error {
	if errdefs.IsNotFound(err) {
		return fmt.Errorf("%w: %s: %s: %w", driver.ErrTaskNotFound, t.ID, what, err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.RequestTimeout)
	defer cancel()
	st, serr := t.Data.task.Status(sctx)
	switch {
	case errdefs.IsNotFound(serr):
		return fmt.Errorf("%w: %s: containerd lost the task: %w", driver.ErrTaskNotFound, t.ID, err)
	case serr == nil && st.Status != client.Running:
		return fmt.Errorf("%w: %s is %s: %w", driver.ErrTaskNotFound, t.ID, st.Status, err)
	}
	return fmt.Errorf("containerd: %s: %s: %w", t.ID, what, err)
}

// stdinCloser reads r and, at its end, calls onEOF before it reports EOF.
type stdinCloser struct {
	r     io.Reader
	onEOF func()
	done  bool
}

func (s *stdinCloser) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	n, err := s.r.Read(p)
	if err != nil {
		s.done = true
		s.onEOF()
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, nil
}

// newExecID is a fresh exec process id: unique in the task, and a valid
// containerd identifier.
func newExecID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "exec-" + hex.EncodeToString(b[:])
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
