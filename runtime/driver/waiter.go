package driver

import (
	"context"
	"fmt"
	"sync"
)

// waiter is one WaitTask channel: it gets exactly one result, either the
// task's or the context's error, and then closes.
type waiter struct {
	ch   chan *ExitResult
	once sync.Once
	mu   sync.Mutex
	stop func() bool
}

func newWaiter(ctx context.Context) *waiter {
	w := &waiter{ch: make(chan *ExitResult, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	// AfterFunc may run its function at once (ctx already done); it then
	// waits for w.mu, so w.stop is set before deliver reads it.
	w.stop = context.AfterFunc(ctx, func() {
		w.deliver(&ExitResult{ExitCode: -1, Err: fmt.Errorf("driver: wait ended: %w", context.Cause(ctx))})
	})
	return w
}

// deliver sends r (a copy) unless a result was already sent.
func (w *waiter) deliver(r *ExitResult) {
	w.mu.Lock()
	stop := w.stop
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	w.once.Do(func() {
		c := *r
		w.ch <- &c
		close(w.ch)
	})
}
