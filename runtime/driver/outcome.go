package driver

import "context"

// outcome is how a task ended and who waits to hear it: the part of a
// task that Task (the real drivers') and the Fake's tasks share. It is not
// safe for concurrent use; its owner's lock guards it.
type outcome struct {
	result  *ExitResult // nil while the task runs
	waiters []*Waiter
}

// wait returns a WaitTask channel: it gets the result at once when the
// task has ended, else when finish records it.
func (o *outcome) wait(ctx context.Context) <-chan *ExitResult {
	w := NewWaiter(ctx)
	if o.result != nil {
		w.Deliver(o.result)
	} else {
		o.waiters = append(o.waiters, w)
	}
	return w.C()
}

// finish records r and wakes the waiters; it reports false, changing
// nothing, when a result was recorded before.
func (o *outcome) finish(r *ExitResult) bool {
	if o.result != nil {
		return false
	}
	o.result = r
	o.deliver(r)
	return true
}

// deliver ends every pending wait with r without recording it.
func (o *outcome) deliver(r *ExitResult) {
	for _, w := range o.waiters {
		w.Deliver(r)
	}
	o.waiters = nil
}
