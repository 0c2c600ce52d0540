package node

import (
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// The client actor keeps what it knows of each allocation in one entry of
// an allocTable. Every change goes through allocTable.Step, which does no
// I/O and reads no clock: the actor carries out the effects (spawning and
// stopping alloc actors, messages to them, the state file, the batch sent
// to the servers, timers). An allocation that is gone (its actor stopped
// or dead, the servers no longer list it, its last report answered) leaves
// no entry behind.

// entryPhase is where an allocation stands on the client. It follows from
// the entry's fields (phase), so no entry can hold two at once.
type entryPhase uint8

// Entry phases. phaseAbsent is an allocation with no entry.
const (
	phaseAbsent    entryPhase = iota
	phaseListed               // the servers list it; no alloc actor runs (not to run, or it died)
	phaseRunning              // its alloc actor runs; its client status is not final
	phaseFinished             // its alloc actor runs; its client status is final
	phaseReporting            // no actor, not listed: only its last report waits for the servers
)

var phaseNames = [...]string{
	phaseAbsent:    "absent",
	phaseListed:    "listed",
	phaseRunning:   "running",
	phaseFinished:  "finished",
	phaseReporting: "reporting",
}

func (p entryPhase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("entryPhase(%d)", uint8(p))
}

// allocEntry is everything the client actor knows of one allocation.
type allocEntry struct {
	// alloc is the allocation (with its job) as its actor was spawned.
	alloc *messages.Allocation
	// running: an alloc actor runs for it (client/allocs/<id>).
	running bool
	// status is the last client status reported (or restored).
	status string
	// desired: the servers' newest set lists it.
	desired bool
	// released: its actor let go of everything it held on the host.
	released bool
	// window is its group's stop_on_client_after; 0 for none, or once the
	// client acted on it.
	window time.Duration
	// report is its newest report, sent again after a reconnect.
	report *messages.Allocation
	// queued: report waits for the next batch; sending: a batch in flight
	// carries it.
	queued, sending bool
}

func (e *allocEntry) phase() entryPhase {
	switch {
	case e == nil:
		return phaseAbsent
	case e.running && messages.ClientTerminalStatus(e.status):
		return phaseFinished
	case e.running:
		return phaseRunning
	case e.desired:
		return phaseListed
	}
	return phaseReporting
}

// gone reports whether nothing is left to do for the entry.
func (e *allocEntry) gone() bool {
	return !e.running && !e.desired && !e.queued && !e.sending
}

// flushTimer says which batch timer the actor must arm.
type flushTimer uint8

const (
	flushNone  flushTimer = iota
	flushBatch            // the batch interval: gather updates first
	flushRetry            // the retry backoff: the last batch failed
)

// allocEvent is one thing that happens to the client's allocations.
type allocEvent interface{ isAllocEvent() }

type (
	// evRestored: the state file was read at start.
	evRestored struct{ Allocs []*messages.Allocation }
	// evListed: the servers pushed their full set for the node.
	evListed struct {
		Index  uint64
		Allocs []*messages.Allocation
	}
	// evSpawnFailed: the alloc actor an effect asked for did not start.
	evSpawnFailed struct{ ID string }
	// evReported: an alloc actor reported its allocation.
	evReported struct{ Alloc *messages.Allocation }
	// evReleased: an alloc actor let go of everything on the host.
	evReleased struct{ ID string }
	// evDied: an alloc actor terminated (not stopped by the client), at At.
	evDied struct {
		ID string
		At time.Time
	}
	// evFlushDue: the batch timer fired.
	evFlushDue struct{}
	// evFlushed: the servers answered the batch in flight (Failed: with an
	// error).
	evFlushed struct{ Failed bool }
	// evResend: back in contact; the servers may have marked the node's
	// allocations, so every report goes again.
	evResend struct{}
	// evWindowsDue: check the stop_on_client_after windows at Now, for a
	// client last in contact with the servers at LastContact.
	evWindowsDue struct{ Now, LastContact time.Time }
)

func (evRestored) isAllocEvent()    {}
func (evListed) isAllocEvent()      {}
func (evSpawnFailed) isAllocEvent() {}
func (evReported) isAllocEvent()    {}
func (evReleased) isAllocEvent()    {}
func (evDied) isAllocEvent()        {}
func (evFlushDue) isAllocEvent()    {}
func (evFlushed) isAllocEvent()     {}
func (evResend) isAllocEvent()      {}
func (evWindowsDue) isAllocEvent()  {}

// windowStop is an allocation stopped for its stop_on_client_after window.
type windowStop struct {
	ID     string
	Window time.Duration
}

// allocEffects is what the client actor must do after a step, in this
// order.
type allocEffects struct {
	Spawn  []*messages.Allocation // start an alloc actor for each
	Update []*messages.Allocation // send each to its alloc actor (by ID) as UpdateAlloc
	Forget []string               // stop the alloc actor, delete its state file record
	// Send is a batch of reports to send to the servers in one call.
	Send  []*messages.Allocation
	Flush flushTimer
	// Crashed are the failed reports of alloc actors that died while
	// wanted (queued like any report); WindowStops, the stop orders in
	// Update sent for a stop_on_client_after window.
	Crashed     []*messages.Allocation
	WindowStops []windowStop
	// ArmStopCheck: the windows changed, re-arm their timer.
	ArmStopCheck bool
	// Stale: the set was older than the newest one; nothing changed.
	Stale bool
}

// allocTable is the client's allocations, one entry each.
type allocTable struct {
	entries map[string]*allocEntry
	// index is that of the newest set received (evListed).
	index uint64
	// queue holds the IDs of the entries whose report waits (queued), in
	// the order they were queued; sending, those of the batch in flight.
	queue, sending []string
	// armed: the batch timer is armed.
	armed bool
}

func newAllocTable() *allocTable { return &allocTable{entries: map[string]*allocEntry{}} }

// Len is the number of entries.
func (t *allocTable) Len() int { return len(t.entries) }

// phase returns the allocation's phase.
func (t *allocTable) phase(id string) entryPhase { return t.entries[id].phase() }

// alloc returns the allocation as its actor was spawned; nil when none was.
func (t *allocTable) alloc(id string) *messages.Allocation {
	if e := t.entries[id]; e != nil {
		return e.alloc
	}
	return nil
}

// windows returns the stop_on_client_after windows still running, by ID.
func (t *allocTable) windows() map[string]time.Duration {
	w := map[string]time.Duration{}
	for id, e := range t.entries {
		if e.window > 0 {
			w[id] = e.window
		}
	}
	return w
}

// Step takes one event and returns the effects. On error nothing changes.
func (t *allocTable) Step(ev allocEvent) (allocEffects, error) {
	if err := t.check(ev); err != nil {
		return allocEffects{}, err
	}
	var eff allocEffects
	switch m := ev.(type) {
	case evRestored:
		t.restored(m, &eff)
	case evListed:
		t.listed(m, &eff)
	case evSpawnFailed:
		t.spawnFailed(m.ID, &eff)
	case evReported:
		t.reported(m.Alloc, &eff)
	case evReleased:
		t.released(m.ID, &eff)
	case evDied:
		t.died(m, &eff)
	case evFlushDue:
		t.flushDue(&eff)
	case evFlushed:
		t.flushed(m.Failed, &eff)
	case evResend:
		t.resend(&eff)
	case evWindowsDue:
		t.windowsDue(m, &eff)
	}
	return eff, nil
}

// check refuses an event the table cannot use, before anything changes.
func (t *allocTable) check(ev allocEvent) error {
	var id string
	switch m := ev.(type) {
	case evRestored, evListed, evFlushDue, evResend:
		return nil
	case evReported:
		id = m.Alloc.GetID()
	case evSpawnFailed:
		id = m.ID
	case evReleased:
		id = m.ID
	case evDied:
		id = m.ID
	case evFlushed:
		if t.sending == nil {
			return fmt.Errorf("%w: a batch answered with none in flight", errInvalidAllocEvent)
		}
		return nil
	case evWindowsDue:
		if m.Now.IsZero() {
			return fmt.Errorf("%w: zero time", errInvalidAllocEvent)
		}
		return nil
	default:
		return fmt.Errorf("%w: %T", errInvalidAllocEvent, ev)
	}
	if id == "" {
		return fmt.Errorf("%w: %T without an allocation ID", errInvalidAllocEvent, ev)
	}
	return nil
}
