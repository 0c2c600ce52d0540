package exec

import (
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
	waiters []*driver.Waiter
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
