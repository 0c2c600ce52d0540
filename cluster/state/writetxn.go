package state

import (
	"log/slog"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// writeTxn is one FSM command's write transaction. It keeps the derived
// tables (node usage, job summaries) in maps while the command runs and
// flushes them, the job statuses and the table indexes on commit.
type writeTxn struct {
	store   *Store
	txn     *memdb.Txn
	base    *allocTable // as of the transaction's start
	at      *allocTable // owned copy, made on first write; nil before
	gen     uint64
	index   uint64
	now     int64 // Command.Time, unix nanos
	usage   map[string]*nodeUsage
	summary map[jobRef]*jobSummary
	windows map[string]*windowCounts // node ID: disconnect windows
	// windowOf caches job version groups' disconnect windows.
	windowOf map[windowKey]time.Duration
	changed  map[string]bool // watched tables written
	nodes    *nodeList       // sharedNodes, once looked up
	noNodes  bool            // sharedNodes found none to share
	jobs     map[jobRef]bool // jobs whose status may change
	ev       *eventBuilder
	log      *slog.Logger
}

func newWriteTxn(s *Store, index uint64, now int64, log *slog.Logger) *writeTxn {
	txn, base, gen := s.begin()
	return &writeTxn{
		store:   s,
		txn:     txn,
		base:    base,
		gen:     gen,
		index:   index,
		now:     now,
		usage:   map[string]*nodeUsage{},
		summary: map[jobRef]*jobSummary{},
		windows: map[string]*windowCounts{},

		windowOf: map[windowKey]time.Duration{},
		changed:  map[string]bool{},
		jobs:     map[jobRef]bool{},
		ev:       newEventBuilder(index),
		log:      log,
	}
}

type jobRef struct{ ns, id string }

// JobKey is how a job is named in Event.JobsChanged: "<namespace>/<id>".
func JobKey(ns, id string) string { return ns + "/" + id }

// SplitJobKey is the namespace and ID of a JobKey (a namespace never
// holds "/"; a child job's ID does).
func SplitJobKey(key string) (ns, id string) {
	ns, id, _ = strings.Cut(key, "/")
	return ns, id
}

func (w *writeTxn) insert(table string, obj any) {
	if err := w.txn.Insert(table, obj); err != nil {
		panic(err) // schema violation: a programming bug
	}
}

func (w *writeTxn) delete(table string, obj any) {
	if err := w.txn.Delete(table, obj); err != nil && err != memdb.ErrNotFound {
		panic(err)
	}
}

// read is a view of the transaction's own state, writes included; valid
// only until the next write.
func (w *writeTxn) read() *Snap { return &Snap{txn: w.txn, allocs: w.allocTable(false)} }

// allocTable returns the allocation table, made writable when write.
func (w *writeTxn) allocTable(write bool) *allocTable {
	if w.at != nil {
		return w.at
	}
	if !write {
		return w.base
	}
	w.at = w.base.edit(w.gen)
	return w.at
}

// nodeUsage returns the writable usage record of a node.
func (w *writeTxn) nodeUsage(nodeID string) *nodeUsage {
	if u, ok := w.usage[nodeID]; ok {
		return u
	}
	u := &nodeUsage{NodeID: nodeID}
	if old, ok := w.allocTable(false).usage.Get(nodeID); ok {
		*u = *old
	}
	w.usage[nodeID] = u
	return u
}

// jobSummary returns the writable summary of a job.
func (w *writeTxn) jobSummary(ns, id string) *jobSummary {
	ref := jobRef{ns, id}
	if s, ok := w.summary[ref]; ok {
		return s
	}
	s := &jobSummary{Namespace: ns, JobID: id}
	if old := first[*jobSummary](w.txn, tableJobSummary, idxID, ns, id); old != nil {
		*s = *old
	}
	w.summary[ref] = s
	w.jobs[ref] = true
	return s
}

// putAlloc stores a (new object for an) allocation, old being what was
// stored before (nil for a new one), and keeps usage and summary exact.
func (w *writeTxn) putAlloc(old, a *messages.Allocation) {
	if old != nil {
		w.account(old, -1)
	}
	w.trackDeployment(old, a)
	w.account(a, +1)
	w.trackWindow(old, a)
	w.allocTable(true).put(old, a)
	w.changed[TableAllocs] = true
	if a.ClientTerminalStatus() && (old == nil || !old.ClientTerminalStatus()) {
		w.ev.allocStopped(a.ID)
		w.dropAllocServices(a.ID)
	}
}

func (w *writeTxn) account(a *messages.Allocation, sign int64) {
	sum := w.jobSummary(a.Namespace, a.JobID)
	sum.Allocs += sign
	if a.TerminalStatus() {
		return
	}
	sum.LiveAllocs += sign
	if a.NodeID == "" {
		return
	}
	cpu, mem, disk := AllocResources(a)
	u := w.nodeUsage(a.NodeID)
	u.CPU += sign * cpu
	u.MemoryMB += sign * mem
	u.DiskMB += sign * disk
	u.Allocs += sign
	if cores := AllocCores(a); len(cores) > 0 {
		u.Cores = changeCores(u.Cores, cores, sign)
	}
}

// putEval stores an evaluation, keeping CreateIndex/CreateTime of the one
// it replaces, and reports it in the event when it is pending.
func (w *writeTxn) putEval(e *messages.Evaluation) {
	if e == nil {
		return
	}
	old := w.read().EvalByID(e.ID)
	e.CreateIndex, e.CreateTime = w.index, w.now
	if old != nil {
		e.CreateIndex, e.CreateTime = old.CreateIndex, old.CreateTime
		w.countEval(old, -1)
	}
	e.ModifyIndex, e.ModifyTime = w.index, w.now
	w.countEval(e, +1)
	w.insert(TableEvals, e)
	w.changed[TableEvals] = true
	w.ev.eval(e, w.now)
}

func (w *writeTxn) countEval(e *messages.Evaluation, sign int64) {
	sum := w.jobSummary(e.Namespace, e.JobID)
	sum.Evals += sign
	if !e.TerminalStatus() {
		sum.OpenEvals += sign
	}
}

func (w *writeTxn) putEvals(evals []*messages.Evaluation) {
	for _, e := range evals {
		w.putEval(e)
	}
}

// putJob stores the current version of a job.
func (w *writeTxn) putJob(j *messages.Job) {
	w.insert(TableJobs, j)
	w.changed[TableJobs] = true
	w.jobs[jobRef{j.Namespace, j.ID}] = true
	w.ev.job(JobKey(j.Namespace, j.ID))
}

func (w *writeTxn) putNode(n *messages.Node) {
	w.countNode(w.read().NodeByID(n.ID), n)
	w.insert(TableNodes, n)
	w.changed[TableNodes] = true
	w.ev.nodeUpdated(n.ID)
}

// abort drops the transaction, first ending the nested-index worker of
// its allocation table (nested_worker.go), if one runs.
func (w *writeTxn) abort() {
	if w.at != nil {
		w.at.sync()
	}
	w.txn.Abort()
}

// commit settles job statuses, flushes the derived tables and the table
// indexes, commits, and returns the event to publish.
func (w *writeTxn) commit() Event {
	w.settleJobStatuses()
	w.flushDerived()
	for t := range w.changed {
		w.insert(tableIndex, &indexEntry{Table: t, Value: w.index})
	}
	w.store.commit(w.txn, w.allocTable(false), w.changed, w.index)
	return w.ev.build()
}

// flushDerived writes the node usage and job summaries changed in this
// transaction.
func (w *writeTxn) flushDerived() {
	if len(w.usage) > 0 {
		at := w.allocTable(true)
		nodes := make([]string, 0, len(w.usage))
		for id, u := range w.usage {
			at.usage.Set(u)
			nodes = append(nodes, id)
		}
		at.logUsage(w.gen, nodes)
	}
	if len(w.windows) > 0 {
		at := w.allocTable(true)
		for id, c := range w.windows {
			if len(c.vals) == 0 {
				at.nodeWindows.Delete(id)
				continue
			}
			at.nodeWindows.Set(c)
		}
	}
	for _, s := range w.summary {
		if s.Allocs == 0 && s.Evals == 0 {
			// Nothing left to count (collected): an absent summary
			// reads the same, and a restored store has none either.
			w.delete(tableJobSummary, s)
			continue
		}
		w.insert(tableJobSummary, s)
	}
}

// settleJobStatuses recomputes the status of every job whose allocations,
// evaluations or definition changed, writing a new object when it moved.
func (w *writeTxn) settleJobStatuses() {
	for ref := range w.jobs {
		j := w.read().JobByID(ref.ns, ref.id)
		if j == nil {
			continue
		}
		status := jobStatus(j, w.jobSummary(ref.ns, ref.id))
		if status == j.Status {
			continue
		}
		nj := copyJob(j)
		nj.Status = status
		nj.ModifyIndex = w.index
		w.putJob(nj)
	}
}
