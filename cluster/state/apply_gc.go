package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// MaxGCItems bounds one GarbageCollect command: the evaluations, jobs,
// nodes and plugins it names together. The collector splits a longer
// list over several commands.
const MaxGCItems = 512

// GCResult is the FSM's answer to GarbageCollect: what it purged.
type GCResult struct {
	Index                               uint64
	Evals, Jobs, Allocs, Nodes, Plugins int
	// Versions is how many old job versions were trimmed.
	Versions int
}

// applyGC purges each named item that is still collectable now (the
// rules of gc_rules.go, at the command's cutoffs); the others stay. The
// jobs to trim keep their newest KeepVersions versions.
func applyGC(w *writeTxn, c *messages.GarbageCollect) any {
	if n := len(c.EvalIDs) + len(c.Jobs) + len(c.NodeIDs) + len(c.PluginIDs) + len(c.TrimJobs); n > MaxGCItems {
		return fmt.Errorf("%w: %d items, at most %d", ErrGCTooLarge, n, MaxGCItems)
	}
	cut := GCCutoffs{Eval: c.EvalCutoff, Job: c.JobCutoff, Node: c.NodeCutoff}
	r := &GCResult{Index: w.index}
	for _, ref := range c.Jobs {
		j := w.read().JobByID(ref.Namespace, ref.ID)
		if j == nil || !w.read().JobCollectable(j, cut) {
			continue
		}
		r.Allocs += w.gcJob(j)
		r.Jobs++
	}
	for _, id := range c.EvalIDs {
		e := w.read().EvalByID(id)
		if e == nil || !w.read().EvalCollectable(e, cut) {
			continue
		}
		r.Allocs += w.gcEval(e)
		r.Evals++
	}
	for _, id := range c.NodeIDs {
		n := w.read().NodeByID(id)
		if n == nil || !w.read().NodeCollectable(n, cut) {
			continue
		}
		w.gcNode(n)
		r.Nodes++
	}
	for _, id := range c.PluginIDs {
		p := w.read().CSIPluginByID(id)
		if p == nil || !w.read().PluginCollectable(p) {
			continue
		}
		w.deletePlugin(p)
		r.Plugins++
	}
	for _, ref := range c.TrimJobs {
		if w.read().JobByID(ref.Namespace, ref.ID) != nil {
			r.Versions += w.trimVersions(ref.Namespace, ref.ID, int(c.KeepVersions))
		}
	}
	return r
}

// gcJob deletes a job with its allocations, evaluations and versions,
// and answers how many allocations went.
func (w *writeTxn) gcJob(j *messages.Job) int {
	allocs := w.read().AllocsByJob(j.Namespace, j.ID)
	for _, a := range allocs {
		w.deleteAlloc(a)
	}
	for _, e := range w.read().EvalsByJob(j.Namespace, j.ID) {
		w.deleteEval(e)
	}
	w.purgeJob(j)
	return len(allocs)
}

// gcEval deletes an evaluation and the allocations it placed.
func (w *writeTxn) gcEval(e *messages.Evaluation) int {
	allocs := w.read().AllocsByEval(e.ID)
	for _, a := range allocs {
		w.deleteAlloc(a)
	}
	w.deleteEval(e)
	return len(allocs)
}

func (w *writeTxn) deleteEval(e *messages.Evaluation) {
	w.countEval(e, -1)
	w.delete(TableEvals, e)
	w.changed[TableEvals] = true
}

// deleteAlloc removes a from every index and from the derived counts
// (its job's summary, its node's usage and disconnect windows).
func (w *writeTxn) deleteAlloc(a *messages.Allocation) {
	w.account(a, -1)
	at := w.allocTable(true)
	if h, ok := at.windows.Get(a.ID); ok {
		at.windows.Delete(a.ID)
		w.nodeWindows(a.NodeID).add(h.window, -1)
	}
	at.remove(a)
	w.changed[TableAllocs] = true
	w.dropAllocServices(a.ID)
}

// gcNode deletes a down node that holds no live allocation, with its
// usage record.
func (w *writeTxn) gcNode(n *messages.Node) {
	w.countNode(n, nil)
	w.delete(TableNodes, n)
	w.changed[TableNodes] = true
	w.ev.nodeDeleted(n.ID)
	delete(w.usage, n.ID)
	w.allocTable(true).usage.Delete(n.ID)
}
