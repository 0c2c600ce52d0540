package driver

// Task is one task a driver knows: its id and handle, the driver's own
// data about it, and how it ended. Handle and Data are the driver's to set
// until it adds the task to its Tasks table (a watcher started before that
// must not read what is still being set); after Add they do not change.
// Tasks.Finish records the end.
type Task[D any] struct {
	ID     string
	Handle TaskHandle
	Data   D

	done    chan struct{}
	outcome // guarded by the table's mutex
}

// NewTask returns a running task.
func NewTask[D any](id string, data D) *Task[D] {
	return &Task[D]{ID: id, Data: data, done: make(chan struct{})}
}

// Done is closed once the task has ended.
func (t *Task[D]) Done() <-chan struct{} { return t.done }

// Exited reports whether the task has ended, without blocking.
func (t *Task[D]) Exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// Result is how the task ended; nil while it runs.
func (t *Task[D]) Result() *ExitResult {
	if !t.Exited() {
		return nil
	}
	return t.result
}
