package driver

import (
	"fmt"
	"maps"
	"slices"
	"syscall"
)

// Exit makes a running task exit with code. Exiting a task that already
// exited changes nothing; an unknown task is ErrTaskNotFound.
func (f *Fake) Exit(taskID string, code int) error {
	return f.ExitWith(taskID, &ExitResult{ExitCode: code})
}

// ExitWith makes a running task end with r (a signal, OOM, an error).
func (f *Fake) ExitWith(taskID string, r *ExitResult) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[taskID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrTaskNotFound, taskID)
	}
	t.finish(r)
	return nil
}

// Forget drops a task as if the host rebooted: RecoverTask then fails with
// ErrTaskNotFound. Its waiters get an error result.
func (f *Fake) Forget(taskID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tasks[taskID]; ok {
		t.finish(&ExitResult{Err: fmt.Errorf("%w: %s forgotten", ErrTaskNotFound, taskID)})
		delete(f.tasks, taskID)
	}
}

// Running reports whether the task is known and has not exited.
func (f *Fake) Running(taskID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[taskID]
	return ok && t.result == nil
}

// TaskIDs lists the tasks the Fake knows, sorted.
func (f *Fake) TaskIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.tasks))
}

// Task returns a copy of the config a task was started with.
func (f *Fake) Task(taskID string) (*TaskConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[taskID]
	if !ok {
		return nil, false
	}
	c := *t.cfg
	c.Config, c.Env = maps.Clone(t.cfg.Config), maps.Clone(t.cfg.Env)
	return &c, true
}

// Signals lists the signals sent to a task by SignalTask and StopTask,
// oldest first.
func (f *Fake) Signals(taskID string) []syscall.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tasks[taskID]; ok {
		return slices.Clone(t.signals)
	}
	return nil
}
