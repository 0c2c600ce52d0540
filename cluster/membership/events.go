package membership

import "sync"

// eventQueue is a bounded channel of events that never blocks the sender:
// memberlist calls its delegates while holding its own locks, so when the
// consumer falls behind the oldest event is dropped and counted.
type eventQueue struct {
	mu      sync.Mutex
	ch      chan Event
	closed  bool
	dropped uint64
}

func newEventQueue(size int) *eventQueue {
	return &eventQueue{ch: make(chan Event, size)}
}

// push queues ev, dropping the oldest queued event when the buffer is full.
func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	for {
		select {
		case q.ch <- ev:
			return
		default:
		}
		select {
		case <-q.ch:
			q.dropped++
		default:
		}
	}
}

// close closes the channel; later pushes are ignored.
func (q *eventQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
}

func (q *eventQueue) droppedCount() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}
