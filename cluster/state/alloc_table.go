package state

import (
	"github.com/troupe-dev/troupe/messages"
)

// allocTable holds the allocations and their indexes (by ID; by job; by
// node; by eval, each sorted by alloc ID) plus the per-node usage of
// non-terminal allocations. A published allocTable is immutable; a write
// transaction edits a copy (edit) and the store publishes it on commit,
// together with the go-memdb commit, so a Snap sees both at one moment.
type allocTable struct {
	gen    uint64
	byID   *pmap[*messages.Allocation]
	byJob  *pmap[*pmap[*messages.Allocation]] // key: allocJobKey
	byNode *pmap[*pmap[*messages.Allocation]]
	byEval *pmap[*pmap[*messages.Allocation]]
	usage  *pmap[*nodeUsage]
	// windows is the disconnect window each counted allocation holds
	// (only non-zero ones); nodeWindows counts them per node
	// (disconnect_window.go).
	// jobCur and evalCur remember the inner map of the last job and
	// evaluation written in this generation: a plan writes a thousand
	// allocations of one job and one evaluation in a row.
	jobCur, evalCur nestedCursor[*messages.Allocation]
	// jobKey caches the last allocJobKey built: a plan's placements are
	// of one job.
	jobKey struct{ ns, job, key string }

	windows     *pmap[heldWindow]
	nodeWindows *pmap[*windowCounts]
	// usageLog names the nodes whose usage recent transactions changed
	// (usage_log.go).
	usageLog []usageChange
	// liveNodes counts the nodes that are not down (live_nodes.go); it
	// rides here so that a Snap sees it at the same moment as the rest.
	liveNodes int
	// pending and worker write fresh placements into the nested indexes
	// off the FSM's goroutine (nested_worker.go); both are nil in a
	// published table.
	pending []*messages.Allocation
	worker  *nestedWorker
}

func newAllocTable() *allocTable {
	return &allocTable{
		byID:   &pmap[*messages.Allocation]{keyOf: allocID, split: idChunk, dirSplit: idDir},
		byJob:  newPmap(0, innerName[*messages.Allocation]),
		byNode: newPmap(0, innerName[*messages.Allocation]),
		byEval: newPmap(0, innerName[*messages.Allocation]),
		usage:  newPmap(0, func(u *nodeUsage) string { return u.NodeID }),

		windows:     newPmap(0, func(h heldWindow) string { return h.alloc }),
		nodeWindows: newPmap(0, func(c *windowCounts) string { return c.node }),
	}
}

// edit returns a copy of t that transaction gen may change.
func (t *allocTable) edit(gen uint64) *allocTable {
	if t.gen == gen {
		return t
	}
	return &allocTable{
		gen:    gen,
		byID:   t.byID.edit(gen),
		byJob:  t.byJob.edit(gen),
		byNode: t.byNode.edit(gen),
		byEval: t.byEval.edit(gen),
		usage:  t.usage.edit(gen),

		windows:     t.windows.edit(gen),
		nodeWindows: t.nodeWindows.edit(gen),
		liveNodes:   t.liveNodes,
		usageLog:    t.usageLog,
	}
}

func allocJobKey(ns, jobID string) string { return ns + "\x00" + jobID }

// allocJobKey is a's key in byJob, built once for a run of one job's.
func (t *allocTable) allocJobKey(a *messages.Allocation) string {
	if k := &t.jobKey; k.key == "" || k.ns != a.Namespace || k.job != a.JobID {
		k.ns, k.job, k.key = a.Namespace, a.JobID, allocJobKey(a.Namespace, a.JobID)
	}
	return t.jobKey.key
}

// allocID is an allocation's key in the tables.
func allocID(a *messages.Allocation) string { return a.ID }

// put stores a, replacing old (the stored allocation with that ID, or
// nil) in every index. t must be owned by the caller's transaction. A
// fresh placement reaches the nested indexes a moment later
// (putNestedLater); every read of them waits for it (sync).
func (t *allocTable) put(old, a *messages.Allocation) {
	if old == nil {
		t.byID.Set(a)
		t.putNestedLater(a)
		return
	}
	t.sync()
	if old.Namespace != a.Namespace || old.JobID != a.JobID {
		nestedDelete(t.byJob, allocJobKey(old.Namespace, old.JobID), old.ID)
		t.jobCur = nestedCursor[*messages.Allocation]{}
	}
	if old.NodeID != a.NodeID && old.NodeID != "" {
		nestedDelete(t.byNode, old.NodeID, old.ID)
	}
	if old.EvalID != a.EvalID && old.EvalID != "" {
		nestedDelete(t.byEval, old.EvalID, old.ID)
		t.evalCur = nestedCursor[*messages.Allocation]{}
	}
	t.byID.Set(a)
	t.putNested(a)
}

// remove deletes a (the stored allocation) from every index. t must be
// owned by the caller's transaction.
func (t *allocTable) remove(a *messages.Allocation) {
	t.sync()
	t.byID.Delete(a.ID)
	nestedDelete(t.byJob, allocJobKey(a.Namespace, a.JobID), a.ID)
	t.jobCur = nestedCursor[*messages.Allocation]{}
	if a.NodeID != "" {
		nestedDelete(t.byNode, a.NodeID, a.ID)
	}
	if a.EvalID != "" {
		nestedDelete(t.byEval, a.EvalID, a.ID)
		t.evalCur = nestedCursor[*messages.Allocation]{}
	}
}
