package driver

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Processes is how a driver reaches a task's processes; Tasks.Stop,
// Tasks.Signal and Tasks.Halt call it for tasks that still run. Its
// errors are returned as they are, so they carry the driver's prefix.
type Processes[D any] interface {
	// Stop sends StopTask's signal.
	Stop(ctx context.Context, t *Task[D], sig syscall.Signal) error
	// Signal sends SignalTask's signal.
	Signal(ctx context.Context, t *Task[D], sig syscall.Signal) error
	// Kill SIGKILLs every process of the task; it need not wait for them.
	Kill(ctx context.Context, t *Task[D]) error
}

// Stop is StopTask: it sends the stop signal (SIGTERM when signal is
// empty) to a running task, waits up to timeout for the task to end, then
// kills it and returns once it is gone. A task that has ended is done.
func (ts *Tasks[D]) Stop(ctx context.Context, taskID string, timeout time.Duration, signal string,
	p Processes[D]) error {
	t, sig, err := ts.target(taskID, signal, StopSignal)
	if err != nil || t.Exited() {
		return err
	}
	if err := p.Stop(ctx, t, sig); err != nil {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
	}
	ts.log.Info("task ignored stop signal, killing it", "task", taskID, "signal", sig, "timeout", timeout)
	return ts.kill(ctx, t, p)
}

// Signal is SignalTask: it sends signal to a running task; a task that
// has ended is a wrapped ErrTaskNotFound.
func (ts *Tasks[D]) Signal(ctx context.Context, taskID string, signal string, p Processes[D]) error {
	t, sig, err := ts.target(taskID, signal, ParseSignal)
	if err != nil {
		return err
	}
	if t.Exited() {
		return fmt.Errorf("%w: %s has exited", ErrTaskNotFound, taskID)
	}
	return p.Signal(ctx, t, sig)
}

// target parses signal with parse, then finds the task.
func (ts *Tasks[D]) target(taskID, signal string, parse func(string) (syscall.Signal, error)) (
	*Task[D], syscall.Signal, error) {
	sig, err := parse(signal)
	if err != nil {
		return nil, 0, err
	}
	t, err := ts.Get(taskID)
	return t, sig, err
}

// Halt is the first half of DestroyTask: it returns the task once it has
// ended. A running task is killed with force, and without it is a wrapped
// ErrTaskRunning. The caller then removes what the task left and the task
// itself (Remove).
func (ts *Tasks[D]) Halt(ctx context.Context, taskID string, force bool, p Processes[D]) (*Task[D], error) {
	t, err := ts.Get(taskID)
	if err != nil {
		return nil, err
	}
	if t.Exited() {
		return t, nil
	}
	if !force {
		return nil, fmt.Errorf("%w: %s", ErrTaskRunning, taskID)
	}
	if err := ts.kill(ctx, t, p); err != nil {
		return nil, err
	}
	return t, nil
}

// kill SIGKILLs t and waits until it has ended or ctx ends.
func (ts *Tasks[D]) kill(ctx context.Context, t *Task[D], p Processes[D]) error {
	if err := p.Kill(ctx, t); err != nil {
		return err
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
