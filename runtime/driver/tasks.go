package driver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Tasks is the table of tasks that a driver keeps, shared by the drivers:
// the tasks it knows, the ids that StartTask is starting, whether it was
// shut down, and the watcher goroutines that learn how tasks end. Every
// method after Shutdown fails with ErrShutdown (or starts nothing).
type Tasks[D any] struct {
	log    *slog.Logger
	ctx    context.Context // cancelled by Shutdown
	cancel context.CancelFunc
	wg     sync.WaitGroup // watcher goroutines

	mu       sync.Mutex
	closed   bool
	tasks    map[string]*Task[D]
	starting map[string]bool
}

// NewTasks returns an empty table that logs to log.
func NewTasks[D any](log *slog.Logger) *Tasks[D] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Tasks[D]{log: log, ctx: ctx, cancel: cancel, tasks: map[string]*Task[D]{}, starting: map[string]bool{}}
}

// Shutdown stops the watchers and waits for them, then ends every pending
// wait with ErrShutdown. The tasks keep running. It reports whether this
// call shut the table down (false when it was already).
func (ts *Tasks[D]) Shutdown() bool {
	ts.mu.Lock()
	wasClosed := ts.closed
	ts.closed = true
	ts.mu.Unlock()
	ts.cancel()
	ts.wg.Wait()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.tasks {
		t.deliver(&ExitResult{ExitCode: -1, Err: ErrShutdown})
	}
	return !wasClosed
}

// Get finds a task: a wrapped ErrTaskNotFound when the table has none
// with taskID.
func (ts *Tasks[D]) Get(taskID string) (*Task[D], error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return nil, ErrShutdown
	}
	return ts.lookup(taskID)
}

// lookup is Get without the lock and the shutdown check.
func (ts *Tasks[D]) lookup(taskID string) (*Task[D], error) {
	t, ok := ts.tasks[taskID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, taskID)
	}
	return t, nil
}

// Wait is WaitTask: a channel that gets the task's result, at once for a
// task that has ended.
func (ts *Tasks[D]) Wait(ctx context.Context, taskID string) (<-chan *ExitResult, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return nil, ErrShutdown
	}
	t, err := ts.lookup(taskID)
	if err != nil {
		return nil, err
	}
	return t.wait(ctx), nil
}

// Reserve marks taskID as starting, for StartTask; an id that runs or is
// starting is a wrapped ErrTaskAlreadyStarted. Release it when the start
// is over, whether it worked or not.
func (ts *Tasks[D]) Reserve(taskID string) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return ErrShutdown
	}
	if t, ok := ts.tasks[taskID]; (ok && !t.Exited()) || ts.starting[taskID] {
		return fmt.Errorf("%w: %s", ErrTaskAlreadyStarted, taskID)
	}
	ts.starting[taskID] = true
	return nil
}

// Release ends Reserve's mark.
func (ts *Tasks[D]) Release(taskID string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.starting, taskID)
}

// Starting lists the ids that are reserved now.
func (ts *Tasks[D]) Starting() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ids := make([]string, 0, len(ts.starting))
	for id := range ts.starting {
		ids = append(ids, id)
	}
	return ids
}

// Known is RecoverTask's first check: whether the table has taskID
// already (recovering it again is done), or ErrShutdown.
func (ts *Tasks[D]) Known(taskID string) (bool, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return false, ErrShutdown
	}
	_, ok := ts.tasks[taskID]
	return ok, nil
}

// Add puts a started task in the table, in place of an earlier run.
func (ts *Tasks[D]) Add(t *Task[D]) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.tasks[t.ID] = t
}

// AddRecovered puts a recovered task in the table unless a concurrent
// recovery put it there first.
func (ts *Tasks[D]) AddRecovered(t *Task[D]) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, ok := ts.tasks[t.ID]; !ok {
		ts.tasks[t.ID] = t
	}
}

// Remove drops t unless another run of its id replaced it.
func (ts *Tasks[D]) Remove(t *Task[D]) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tasks[t.ID] == t {
		delete(ts.tasks, t.ID)
	}
}

// RemoveIf drops every task for which drop is true; it runs with the
// table locked.
func (ts *Tasks[D]) RemoveIf(drop func(*Task[D]) bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for id, t := range ts.tasks {
		if drop(t) {
			delete(ts.tasks, id)
		}
	}
}

// Watch runs wait in a goroutine the table owns, and finishes t with the
// result wait returns; wait returns nil when its ctx (cancelled by
// Shutdown) ends first. Watch returns false, starting nothing, after
// Shutdown.
func (ts *Tasks[D]) Watch(t *Task[D], wait func(ctx context.Context) *ExitResult) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return false
	}
	ts.wg.Add(1)
	go func() {
		defer ts.wg.Done()
		if r := wait(ts.ctx); r != nil {
			ts.Finish(t, r)
		}
	}()
	return true
}

// Finish records t's result once, wakes its waiters and closes Done.
func (ts *Tasks[D]) Finish(t *Task[D], r *ExitResult) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !t.finish(r) {
		return
	}
	close(t.done)
	ts.log.Debug("task exited", "task", t.ID, "exit_code", r.ExitCode, "signal", r.Signal,
		"oom_killed", r.OOMKilled, "err", r.Err)
}
