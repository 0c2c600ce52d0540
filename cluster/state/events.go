package state

import (
	"context"
	"fmt"
	"sync"

	"github.com/troupe-dev/troupe/messages"
)

// DefaultEventBufferSize is how many applied commands the event buffer
// holds unless told otherwise (SetEventBufferSize): Nomad's event_buffer_size
// default.
const DefaultEventBufferSize = 100

// EventBufferObjects bounds the objects (allocations placed, stopped or
// updated; 1 for any other command) the event buffer holds commands for:
// each entry keeps the store's state as of its index alive, about 1.6 KB
// per allocation it changed (a 1000-allocation plan: 1.6 MB), so oldest
// entries go first once the buffer is over it (about 32 MB).
const EventBufferObjects = 20_000

// eventEntry is one applied command as the event buffer keeps it: the
// decoded command, the FSM's answer and a read view of the store right
// after it. Nothing is copied or encoded when it is recorded; a reader
// turns it into events (eventsOf) when it asks.
type eventEntry struct {
	index uint64
	cmd   *messages.Command
	resp  any
	snap  *Snap
	cost  int // objects it changed (eventCost)
}

// eventRing is the store's bounded buffer of applied commands, newest
// last, ordered by raft index. The FSM appends to it (recordEvents) and
// never waits on a reader: a reader that falls further behind than the
// ring holds is told so (ErrEventsLost) when it asks for what was
// overwritten. Its zero value is ready to use.
type eventRing struct {
	mu      sync.Mutex
	size    int
	entries []eventEntry // ring of size slots once the first is recorded
	next    int          // slot the next entry goes in
	count   int          // entries held
	evicted uint64       // index of the newest entry dropped
	cost    int          // sum of the held entries' costs
	budget  int          // most cost held (0: EventBufferObjects)
	wake    chan struct{}
}

// SetEventBufferSize sets how many applied commands the event stream can
// replay (n < 1: DefaultEventBufferSize). It drops what the buffer held.
func (s *Store) SetEventBufferSize(n int) {
	r := &s.events
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 {
		n = DefaultEventBufferSize
	}
	r.size, r.entries, r.next, r.count, r.evicted, r.cost = n, nil, 0, 0, 0, 0
}

// recordEvents keeps what an applied command changed for the event
// stream. It is called by the FSM after each command (error answers
// changed nothing and are not kept) and costs one read view and a slot.
func (s *Store) recordEvents(index uint64, cmd *messages.Command, resp any) {
	if _, failed := resp.(error); failed || cmd == nil {
		return
	}
	snap := s.Snapshot()
	r := &s.events
	r.mu.Lock()
	if r.entries == nil {
		if r.size < 1 {
			r.size = DefaultEventBufferSize
		}
		r.entries = make([]eventEntry, r.size)
	}
	cost, budget := eventCost(cmd), r.budget
	if budget <= 0 {
		budget = EventBufferObjects
	}
	for r.count > 0 && (r.count == r.size || r.cost+cost > budget) {
		r.dropOldest()
	}
	r.entries[r.next] = eventEntry{index: index, cmd: cmd, resp: resp, snap: snap, cost: cost}
	r.next = (r.next + 1) % r.size
	r.count++
	r.cost += cost
	wake := r.wake
	r.wake = nil
	r.mu.Unlock()
	if wake != nil {
		close(wake)
	}
}

// dropOldest lets the oldest entry go; r.mu is held.
func (r *eventRing) dropOldest() {
	i := r.oldestSlot()
	r.evicted, r.cost = r.entries[i].index, r.cost-r.entries[i].cost
	r.entries[i] = eventEntry{}
	r.count--
}

func (r *eventRing) oldestSlot() int {
	i := r.next - r.count
	if i < 0 {
		i += r.size
	}
	return i
}

// eventCost is how many objects a command names (its allocations), at
// least 1.
func eventCost(cmd *messages.Command) int {
	switch c := cmd.Cmd.(type) {
	case *messages.Command_ApplyPlan:
		return 1 + c.ApplyPlan.PlacementCount() + len(c.ApplyPlan.Stop) + len(c.ApplyPlan.Preemptions)
	case *messages.Command_UpdateAllocsFromClient:
		return 1 + len(c.UpdateAllocsFromClient.Allocs)
	}
	return 1
}

// read returns, oldest first, up to max entries with an index >= from,
// and the entry just before the first returned (its snapshot is the
// state before them; nil when the ring holds none before). lost says the
// ring no longer holds every entry from `from` on. When nothing is there
// yet, wait is closed as soon as something is recorded.
func (r *eventRing) read(from uint64, max int) (out []eventEntry, before *eventEntry, lost bool, wait <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := r.oldestSlot()
	lost = from > 0 && r.evicted > 0 && from <= r.evicted // 0: from the oldest held
	for i := 0; i < r.count && len(out) < max; i++ {
		e := r.entries[(oldest+i)%r.size]
		if e.index < from {
			p := e
			before = &p
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		if r.wake == nil {
			r.wake = make(chan struct{})
		}
		wait = r.wake
	}
	return out, before, lost, wait
}

// oldestIndex is the index of the oldest entry held (0: none).
func (r *eventRing) oldestIndex() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == 0 {
		return 0
	}
	return r.entries[r.oldestSlot()].index
}

// EventBatch is the events of one applied command.
type EventBatch struct {
	Index  uint64
	Events []StreamEvent
}

// StreamEvent is one event of the stream: Payload is the stored object
// (*messages.Job, *messages.Allocation, ...) as of Index; never mutate it.
// Deleted says a job was purged (Payload is its last state).
type StreamEvent struct {
	Topic      string
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    any
	Deleted    bool
}

// EventSubscription reads the event stream from an index on; it belongs
// to one reader.
type EventSubscription struct {
	store *Store
	next  uint64
	prev  *Snap
	match func(*StreamEvent) bool
}

// SubscribeEvents reads the events of commands applied at index `from` or
// later (0: from the oldest held) for which match is true (nil: all).
func (s *Store) SubscribeEvents(from uint64, match func(*StreamEvent) bool) *EventSubscription {
	return &EventSubscription{store: s, next: from, match: match}
}

// Next blocks until the next batches with a matching event are there and
// returns them (batches whose events all fail to match are skipped), or
// returns ErrEventsLost when the buffer no longer holds the events asked
// for, or ctx's error.
func (sub *EventSubscription) Next(ctx context.Context) ([]EventBatch, error) {
	for {
		entries, before, lost, wait := sub.store.events.read(sub.next, 64)
		if lost {
			return nil, fmt.Errorf("%w: events from index %d are no longer held (oldest held: %d)",
				ErrEventsLost, sub.next, sub.store.events.oldestIndex())
		}
		if before != nil && sub.prev == nil {
			sub.prev = before.snap
		}
		var out []EventBatch
		for _, e := range entries {
			evs := eventsOf(e, sub.prev)
			sub.prev, sub.next = e.snap, e.index+1
			b := EventBatch{Index: e.index}
			for i := range evs {
				if sub.match == nil || sub.match(&evs[i]) {
					b.Events = append(b.Events, evs[i])
				}
			}
			if len(b.Events) > 0 {
				out = append(out, b)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if wait == nil {
			continue
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
