package state

import (
	"slices"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// DisconnectWindow is how long a group's allocations may stay on a node
// that stopped heartbeating before they count as lost: the longest of
// the group's disconnect lost_after and stop_on_client_after and its
// stop_after_client_disconnect. 0 for a nil job or an unknown group.
func DisconnectWindow(j *messages.Job, group string) time.Duration {
	for _, g := range j.GetTaskGroups() {
		if g.GetName() != group {
			continue
		}
		d := g.GetDisconnect()
		w := max(time.Duration(d.GetLostAfter()), time.Duration(d.GetStopOnClientAfter()))
		return max(w, time.Duration(g.GetStopAfterClientDisconnect()))
	}
	return 0
}

// windowCounted reports whether an allocation's disconnect window counts
// for its node: it is placed, meant to run, and not over on the client.
func windowCounted(a *messages.Allocation) bool {
	return a != nil && a.NodeID != "" && a.DesiredStatus == messages.AllocDesiredStatusRun && !a.ClientTerminalStatus()
}

// windowCounts is, for one node, how many counted allocations hold each
// non-zero disconnect window, sorted by window. A node holds a handful of
// distinct windows (one per job group that sets one), so adding, removing
// and reading the longest are O(distinct windows), never O(allocations).
// A published windowCounts is immutable; a transaction edits a copy.
type windowCounts struct {
	node string
	vals []windowCount
}

// heldWindow is the disconnect window one counted allocation holds.
type heldWindow struct {
	alloc  string
	window time.Duration
}

type windowCount struct {
	window time.Duration
	n      int64
}

// add counts one more (delta +1) or one fewer (-1) allocation holding
// window d. c must be owned by the caller's transaction.
func (c *windowCounts) add(d time.Duration, delta int64) {
	i, found := slices.BinarySearchFunc(c.vals, d, func(v windowCount, d time.Duration) int {
		return int(min(max(v.window-d, -1), 1))
	})
	switch {
	case found:
		c.vals[i].n += delta
		if c.vals[i].n <= 0 {
			c.vals = slices.Delete(c.vals, i, i+1)
		}
	case delta > 0:
		c.vals = slices.Insert(c.vals, i, windowCount{window: d, n: delta})
	}
}

// longest is the longest window held, 0 when none is.
func (c *windowCounts) longest() time.Duration {
	if c == nil || len(c.vals) == 0 {
		return 0
	}
	return c.vals[len(c.vals)-1].window
}

// windowKey names a job version's group for the transaction's cache.
type windowKey struct {
	ns, job, group string
	version        uint64
}

// allocWindow is the disconnect window of a's group in a's job version,
// cached for the transaction (a plan places many allocations of one).
func (w *writeTxn) allocWindow(a *messages.Allocation) time.Duration {
	k := windowKey{a.Namespace, a.JobID, a.TaskGroup, a.JobVersion}
	if d, ok := w.windowOf[k]; ok {
		return d
	}
	d := DisconnectWindow(w.read().JobVersion(a.Namespace, a.JobID, a.JobVersion), a.TaskGroup)
	w.windowOf[k] = d
	return d
}

// trackWindow keeps the per-node disconnect windows exact as old (nil
// for a new allocation) is replaced by a. The window an allocation counts
// with is stored by its ID, so that removing it needs no job lookup.
func (w *writeTxn) trackWindow(old, a *messages.Allocation) {
	at := w.allocTable(true)
	var was, now time.Duration
	if old != nil {
		h, _ := at.windows.Get(old.ID)
		was = h.window
	}
	if windowCounted(a) {
		if windowCounted(old) && sameGroupVersion(old, a) {
			now = was
		} else {
			now = w.allocWindow(a)
		}
	}
	if old != nil && was == now && old.NodeID == a.NodeID {
		return
	}
	if was > 0 {
		at.windows.Delete(old.ID)
		w.nodeWindows(old.NodeID).add(was, -1)
	}
	if now > 0 {
		at.windows.Set(heldWindow{a.ID, now})
		w.nodeWindows(a.NodeID).add(now, +1)
	}
}

func sameGroupVersion(a, b *messages.Allocation) bool {
	return a.Namespace == b.Namespace && a.JobID == b.JobID && a.TaskGroup == b.TaskGroup && a.JobVersion == b.JobVersion
}

// nodeWindows returns the writable window counts of a node.
func (w *writeTxn) nodeWindows(nodeID string) *windowCounts {
	if c, ok := w.windows[nodeID]; ok {
		return c
	}
	c := &windowCounts{node: nodeID}
	if old, ok := w.allocTable(false).nodeWindows.Get(nodeID); ok {
		c.vals = slices.Clone(old.vals)
	}
	w.windows[nodeID] = c
	return c
}

// dropVersionWindows is called when job version v is deleted (pruned or
// purged): its allocations count no window any more, as if their version
// had never set one, so that the store reads the same as one restored from
// a snapshot taken after the deletion. Only a version whose groups set a
// window costs a walk of the job's allocations, and only on this job-level
// change, never per allocation change.
func (w *writeTxn) dropVersionWindows(v *messages.Job) {
	clear(w.windowOf)
	setsOne := false
	for _, g := range v.GetTaskGroups() {
		setsOne = setsOne || DisconnectWindow(v, g.GetName()) > 0
	}
	if !setsOne {
		return
	}
	at := w.allocTable(true)
	at.sync()
	for _, a := range nestedValues(at.byJob, allocJobKey(v.Namespace, v.ID)) {
		if a.JobVersion != v.Version {
			continue
		}
		if h, ok := at.windows.Get(a.ID); ok {
			at.windows.Delete(a.ID)
			w.nodeWindows(a.NodeID).add(h.window, -1)
		}
	}
}
