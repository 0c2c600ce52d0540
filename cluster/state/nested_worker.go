package state

import "github.com/troupe-dev/troupe/messages"

// The nested indexes (by job, node and evaluation) of a transaction's
// fresh placements are written on a goroutine of their own while the FSM
// goes on with the plan (its fit checks, the index by ID, the usage, the
// summaries): a plan of a thousand placements spent about a third of its
// time in them, on the one goroutine raft applies entries on.
//
// Only placements of new IDs (put with no old allocation) go to the
// worker, in batches, in order. Everything that reads or changes the
// nested indexes otherwise (a replacement, a removal, the reads of a
// transaction's Snap, the commit) waits for it first (sync), so each
// index sees the same writes in the same order as before. The worker owns
// byJob, byNode, byEval, jobCur, evalCur and jobKey while it runs; the
// FSM's goroutine touches the table's other fields only.

// nestedBatch is how many placements go to the worker at once.
const nestedBatch = 64

type nestedWorker struct {
	batches chan []*messages.Allocation
	done    chan struct{}
}

// putNestedLater queues a fresh placement for the nested indexes.
func (t *allocTable) putNestedLater(a *messages.Allocation) {
	if t.pending == nil {
		t.pending = make([]*messages.Allocation, 0, nestedBatch)
	}
	t.pending = append(t.pending, a)
	if len(t.pending) < nestedBatch {
		return
	}
	if t.worker == nil {
		w := &nestedWorker{batches: make(chan []*messages.Allocation, 4), done: make(chan struct{})}
		t.worker = w
		go t.runNested(w)
	}
	t.worker.batches <- t.pending
	t.pending = nil
}

func (t *allocTable) runNested(w *nestedWorker) {
	defer close(w.done)
	for batch := range w.batches {
		for _, a := range batch {
			t.putNested(a)
		}
	}
}

// putNested writes a into the nested indexes.
func (t *allocTable) putNested(a *messages.Allocation) {
	t.jobCur.set(t.byJob, t.allocJobKey(a), a, allocID)
	if a.NodeID != "" {
		nestedSet(t.byNode, a.NodeID, a, allocID)
	}
	if a.EvalID != "" {
		t.evalCur.set(t.byEval, a.EvalID, a, allocID)
	}
}

// sync waits until every queued placement is in the nested indexes. On
// a published table (nothing queued, no worker) it only reads two fields
// and writes nothing: readers on any goroutine call it.
func (t *allocTable) sync() {
	if t.worker == nil && len(t.pending) == 0 {
		return
	}
	if t.worker != nil {
		w := t.worker
		t.worker = nil
		close(w.batches)
		<-w.done
	}
	for _, a := range t.pending {
		t.putNested(a)
	}
	t.pending = nil
}
