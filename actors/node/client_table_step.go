package node

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// drop deletes the entry once it is gone.
func (t *allocTable) drop(id string) {
	if e := t.entries[id]; e != nil && e.gone() {
		delete(t.entries, id)
	}
}

// spawn asks for the allocation's actor.
func (t *allocTable) spawn(e *allocEntry, a *messages.Allocation, eff *allocEffects) {
	e.alloc, e.running = a, true
	if e.window = stopOnClientAfter(a); e.window > 0 {
		eff.ArmStopCheck = true
	}
	eff.Spawn = append(eff.Spawn, a)
}

// restored respawns the allocations of a previous run: their actors
// re-attach to their tasks through the stored handles.
func (t *allocTable) restored(m evRestored, eff *allocEffects) {
	for _, a := range m.Allocs {
		if a.GetJob() == nil {
			continue
		}
		e := t.entry(a.GetID())
		e.status = a.GetClientStatus()
		t.spawn(e, a, eff)
	}
}

func (t *allocTable) entry(id string) *allocEntry {
	e := t.entries[id]
	if e == nil {
		e = &allocEntry{}
		t.entries[id] = e
	}
	return e
}

func (t *allocTable) spawnFailed(id string, eff *allocEffects) {
	e := t.entries[id]
	if e == nil || !e.running {
		return
	}
	eff.ArmStopCheck = e.window > 0
	e.running, e.alloc, e.window = false, nil, 0
	t.drop(id)
}

// listed diffs the servers' full set against the entries. It is
// idempotent: a set sent again changes nothing.
func (t *allocTable) listed(m evListed, eff *allocEffects) {
	if m.Index < t.index {
		eff.Stale = true
		return
	}
	t.index = m.Index
	for _, e := range t.entries {
		e.desired = false
	}
	for _, a := range m.Allocs {
		e := t.entry(a.GetID())
		e.desired = true
		switch {
		case e.running:
			eff.Update = append(eff.Update, a)
		case a.GetDesiredStatus() == messages.AllocDesiredStatusRun && !a.ClientTerminalStatus():
			t.spawn(e, a, eff)
		}
	}
	var unlisted []string
	for id, e := range t.entries {
		if !e.desired {
			unlisted = append(unlisted, id)
		}
	}
	slices.Sort(unlisted)
	for _, id := range unlisted {
		t.unlisted(id, t.entries[id], eff)
	}
}

// unlisted handles an entry the servers no longer list: a running one is
// told to stop; a finished one whose actor let go of the host is
// forgotten.
func (t *allocTable) unlisted(id string, e *allocEntry, eff *allocEffects) {
	switch {
	case !e.running:
		t.drop(id)
	case !messages.ClientTerminalStatus(e.status):
		eff.Update = append(eff.Update, &messages.Allocation{ID: id, DesiredStatus: messages.AllocDesiredStatusStop,
			DesiredDescription: "allocation no longer assigned to this node"})
	case e.released:
		t.forget(id, e, eff)
	}
}

// forget stops a finished alloc actor the servers no longer list and drops
// its local state (its alloc dir, with the logs, stays). Its entry stays
// only while its last report waits for the servers.
func (t *allocTable) forget(id string, e *allocEntry, eff *allocEffects) {
	e.running, e.released, e.window, e.status = false, false, 0, ""
	eff.Forget = append(eff.Forget, id)
	t.drop(id)
}

// reported records an allocation's newest report and queues it.
func (t *allocTable) reported(a *messages.Allocation, eff *allocEffects) {
	e := t.entry(a.GetID())
	e.status, e.report = a.GetClientStatus(), a
	t.enqueue(a.GetID(), e)
	t.arm(eff)
}

func (t *allocTable) enqueue(id string, e *allocEntry) {
	if !e.queued {
		e.queued = true
		t.queue = append(t.queue, id)
	}
}

// arm asks for the batch timer when reports wait and no batch is in
// flight or due.
func (t *allocTable) arm(eff *allocEffects) {
	if !t.armed && t.sending == nil && len(t.queue) > 0 {
		t.armed, eff.Flush = true, flushBatch
	}
}

// released records that the allocation's actor let go of the host; a
// finished allocation the servers no longer list is forgotten only then,
// so no teardown is cut short and no state it still needs is dropped.
func (t *allocTable) released(id string, eff *allocEffects) {
	e := t.entries[id]
	if e == nil || !e.running {
		return // a late word from an actor already gone
	}
	e.released = true
	if t.index > 0 && !e.desired && messages.ClientTerminalStatus(e.status) {
		t.forget(id, e, eff)
	}
}

// died handles an alloc actor that terminated (its supervisor gave up
// after repeated crashes, or it was stopped): one still wanted is reported
// failed, so the servers reschedule it.
func (t *allocTable) died(m evDied, eff *allocEffects) {
	e := t.entries[m.ID]
	if e == nil || !e.running {
		return
	}
	e.running, e.released, e.window = false, false, 0
	if !messages.ClientTerminalStatus(e.status) && e.desired {
		failed := &messages.Allocation{ID: m.ID, ClientStatus: messages.AllocClientStatusFailed,
			ClientDescription: "the allocation's actor crashed repeatedly", ModifyTime: m.At.UnixNano()}
		t.reported(failed, eff)
		eff.Crashed = append(eff.Crashed, failed)
	}
	t.drop(m.ID)
}

// flushDue takes every queued report into one batch; one batch is in
// flight at a time, so reports reach the servers in order.
func (t *allocTable) flushDue(eff *allocEffects) {
	t.armed = false
	if t.sending != nil || len(t.queue) == 0 {
		return
	}
	for _, id := range t.queue {
		e := t.entries[id]
		e.queued, e.sending = false, true
		eff.Send = append(eff.Send, e.report)
	}
	t.sending, t.queue = t.queue, nil
}

// flushed ends the batch in flight: answered, its entries that are gone
// are dropped; failed, its reports go again (unless newer ones wait) after
// the retry backoff.
func (t *allocTable) flushed(failed bool, eff *allocEffects) {
	ids := t.sending
	t.sending = nil
	for _, id := range ids {
		e := t.entries[id]
		e.sending = false
		if failed {
			t.enqueue(id, e)
			continue
		}
		t.drop(id)
	}
	if failed {
		t.armed, eff.Flush = true, flushRetry
		return
	}
	t.arm(eff)
}

// resend queues every entry's newest report again.
func (t *allocTable) resend(eff *allocEffects) {
	var ids []string
	for id, e := range t.entries {
		if e.report != nil && !e.queued {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		t.enqueue(id, t.entries[id])
	}
	t.arm(eff)
}

// windowsDue stops every allocation whose stop_on_client_after window has
// passed since the servers last answered: the servers treat them as gone
// after the same window. Each window is acted on once.
func (t *allocTable) windowsDue(m evWindowsDue, eff *allocEffects) {
	if m.LastContact.IsZero() {
		return // no window runs before the first contact
	}
	due, _ := expiredWindows(m.Now, m.LastContact, t.windows())
	for _, id := range due {
		e := t.entries[id]
		w := e.window
		e.window = 0
		if !e.running || messages.ClientTerminalStatus(e.status) {
			continue
		}
		eff.WindowStops = append(eff.WindowStops, windowStop{ID: id, Window: w})
		eff.Update = append(eff.Update, &messages.Allocation{ID: id, DesiredStatus: messages.AllocDesiredStatusStop,
			DesiredDescription: "client lost contact with the servers for " + w.String()})
	}
}
