package state

import (
	"context"
	"sync"
)

// appliedIndex is the raft index of the last entry the FSM applied to the
// store (or of the snapshot it restored), with a broadcast to the
// goroutines that wait for it to pass an index. Unlike the table indexes
// it moves for every entry, also one that changes no table (a command
// that fails, a log entry that is no command).
type appliedIndex struct {
	mu    sync.Mutex
	index uint64
	moved chan struct{} // closed when index moves; nil while nobody waits
}

// AppliedIndex is the raft index of the last entry applied to the store.
func (s *Store) AppliedIndex() uint64 {
	s.applied.mu.Lock()
	defer s.applied.mu.Unlock()
	return s.applied.index
}

// WaitApplied returns nil once the store has applied the raft entry at
// index (AppliedIndex >= index), or ctx's error when ctx ends first. It
// is how a server that forwarded a write answers only when its own
// replica can read it.
func (s *Store) WaitApplied(ctx context.Context, index uint64) error {
	for {
		moved, ok := s.appliedWatch(index)
		if ok {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			if s.AppliedIndex() >= index {
				return nil
			}
			return ctx.Err()
		}
	}
}

// appliedWatch reports whether index is applied and, when it is not, a
// channel closed when the applied index next moves.
func (s *Store) appliedWatch(index uint64) (<-chan struct{}, bool) {
	a := &s.applied
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.index >= index {
		return nil, true
	}
	if a.moved == nil {
		a.moved = make(chan struct{})
	}
	return a.moved, false
}

// setApplied records that the entry at index is applied (after its
// transaction committed) and wakes the waiters. Restore may set it lower
// than before: the store then holds the snapshot's state.
func (s *Store) setApplied(index uint64) {
	a := &s.applied
	a.mu.Lock()
	defer a.mu.Unlock()
	a.index = index
	if a.moved != nil {
		close(a.moved)
		a.moved = nil
	}
}
