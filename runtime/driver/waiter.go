package driver

import (
	"context"
	"fmt"
	"sync"
)

// Waiter is one WaitTask channel: it gets exactly one result, either the
// task's or the context's error, and then closes. Drivers share it.
type Waiter struct {
	ch   chan *ExitResult
	once sync.Once
	mu   sync.Mutex
	stop func() bool
}

// NewWaiter returns a waiter that delivers an error result when ctx ends
// first.
func NewWaiter(ctx context.Context) *Waiter {
	w := &Waiter{ch: make(chan *ExitResult, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	// AfterFunc may run its function at once (ctx already done); it then
	// waits for w.mu, so w.stop is set before Deliver reads it.
	w.stop = context.AfterFunc(ctx, func() {
		w.Deliver(&ExitResult{ExitCode: -1, Err: fmt.Errorf("driver: wait ended: %w", context.Cause(ctx))})
	})
	return w
}

// C is the channel WaitTask returns.
func (w *Waiter) C() <-chan *ExitResult { return w.ch }

// Deliver sends a copy of r unless a result was already sent.
func (w *Waiter) Deliver(r *ExitResult) {
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
