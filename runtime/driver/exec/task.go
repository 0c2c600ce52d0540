package exec

import (
	"context"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// task is one task the driver knows. Its fields after done are guarded by
// the driver's mutex; done closes once result is set.
type task struct {
	id      string
	handle  driver.TaskHandle
	state   handleState
	done    chan struct{}
	result  *driver.ExitResult
	waiters []*waiter
}

func newTask(id string, st handleState) *task {
	return &task{id: id, state: st, done: make(chan struct{})}
}

// exited reports whether the task has ended, without blocking.
func (t *task) exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// waiter is one WaitTask channel: it gets exactly one result, the task's or
// the context's error, and then closes.
type waiter struct {
	ch   chan *driver.ExitResult
	once sync.Once
	stop func() bool
}

func newWaiter(ctx context.Context) *waiter {
	w := &waiter{ch: make(chan *driver.ExitResult, 1)}
	w.stop = context.AfterFunc(ctx, func() {
		w.deliver(&driver.ExitResult{ExitCode: -1, Err: fmt.Errorf("exec: wait ended: %w", context.Cause(ctx))})
	})
	return w
}

// deliver sends a copy of r unless a result was already sent.
func (w *waiter) deliver(r *driver.ExitResult) {
	w.stop()
	w.once.Do(func() {
		c := *r
		w.ch <- &c
		close(w.ch)
	})
}
