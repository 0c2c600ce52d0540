package state

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Snap is a consistent, read-only view of the store at one moment.
//
// Every method returns the stored objects themselves, not copies: callers
// must not mutate them (clone with proto.Clone first). Stored allocations
// carry no Job; read it with JobVersion(ns, id, alloc.JobVersion). Lists
// are sorted by ID (jobs by Namespace then ID); an empty result is nil.
type Snap struct {
	txn    *memdb.Txn
	allocs *allocTable
	// store and db are set on the store's read snapshots (not on a write
	// transaction's view of itself): Nodes shares its list through them.
	store *Store
	db    *memdb.MemDB
	// tables is the store's published table indexes as of txn (nil on a
	// write transaction's view, which reads tableIndex).
	tables map[string]uint64
}

// Index is the largest last-change raft index of the named tables
// (TableJobs, TableEvals, TableAllocs, TableNodes, TableCSIVolumes,
// TableCSIPlugins, TableNodePools); all of them when none is named.
func (s *Snap) Index(tables ...string) uint64 {
	if len(tables) == 0 {
		tables = watchedTables
	}
	if s.tables != nil {
		var m uint64
		for _, t := range tables {
			m = max(m, s.tables[t])
		}
		return m
	}
	return maxIndex(s.txn, nil, tables)
}

func first[T any](txn *memdb.Txn, table, index string, args ...any) T {
	var zero T
	raw, err := txn.First(table, index, args...)
	if err != nil || raw == nil {
		return zero
	}
	return raw.(T)
}

func list[T any](txn *memdb.Txn, table, index string, args ...any) []T {
	it, err := txn.Get(table, index, args...)
	if err != nil {
		return nil
	}
	var out []T
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(T))
	}
	return out
}

// JobByID returns the current version of a job, or nil.
func (s *Snap) JobByID(ns, id string) *messages.Job {
	return first[*messages.Job](s.txn, TableJobs, idxID, ns, id)
}

// JobVersion returns one stored version of a job, or nil.
func (s *Snap) JobVersion(ns, id string, v uint64) *messages.Job {
	return first[*messages.Job](s.txn, tableJobVersions, idxID, ns, id, v)
}

// JobVersions returns the stored versions of a job, newest first (as
// Nomad's /v1/job/:id/versions).
func (s *Snap) JobVersions(ns, id string) []*messages.Job {
	out := list[*messages.Job](s.txn, tableJobVersions, idxID+"_prefix", ns, id)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Jobs returns the current version of every job.
func (s *Snap) Jobs() []*messages.Job {
	return list[*messages.Job](s.txn, TableJobs, idxID)
}

// EvalByID returns an evaluation, or nil.
func (s *Snap) EvalByID(id string) *messages.Evaluation {
	return first[*messages.Evaluation](s.txn, TableEvals, idxID, id)
}

// Evals returns every evaluation.
func (s *Snap) Evals() []*messages.Evaluation {
	return list[*messages.Evaluation](s.txn, TableEvals, idxID)
}

// EvalsByJob returns a job's evaluations.
func (s *Snap) EvalsByJob(ns, id string) []*messages.Evaluation {
	return list[*messages.Evaluation](s.txn, TableEvals, idxJob, ns, id)
}

// EvalsByStatus returns the evaluations with the given status.
func (s *Snap) EvalsByStatus(status string) []*messages.Evaluation {
	return list[*messages.Evaluation](s.txn, TableEvals, idxStatus, status)
}

// AllocByID returns an allocation, or nil.
func (s *Snap) AllocByID(id string) *messages.Allocation {
	a, _ := s.allocs.byID.Get(id)
	return a
}

// Allocs returns every allocation.
func (s *Snap) Allocs() []*messages.Allocation { return s.allocs.byID.Values() }

// AllocCount is how many allocations the store holds, in O(1).
func (s *Snap) AllocCount() int { return s.allocs.byID.Len() }

// AllocsByJob returns a job's allocations (of every version).
func (s *Snap) AllocsByJob(ns, jobID string) []*messages.Allocation {
	s.allocs.sync()
	return nestedValues(s.allocs.byJob, allocJobKey(ns, jobID))
}

// AllocsByNode returns the allocations placed on a node.
func (s *Snap) AllocsByNode(nodeID string) []*messages.Allocation {
	s.allocs.sync()
	return nestedValues(s.allocs.byNode, nodeID)
}

// AllocsByEval returns the allocations an evaluation placed or updated.
func (s *Snap) AllocsByEval(evalID string) []*messages.Allocation {
	s.allocs.sync()
	return nestedValues(s.allocs.byEval, evalID)
}

// NodeByID returns a node, or nil.
func (s *Snap) NodeByID(id string) *messages.Node {
	if s.store != nil {
		if c := s.builtNodeList(s.Index(TableNodes)); c != nil {
			return c.node(id)
		}
	}
	return first[*messages.Node](s.txn, TableNodes, idxID, id)
}

// NodeByName returns the node with that name (the lowest ID when several
// share it), or nil.
func (s *Snap) NodeByName(name string) *messages.Node {
	return first[*messages.Node](s.txn, TableNodes, idxName, name)
}

// Nodes returns every node.
//
// The list is shared by every snapshot of the same nodes (nodes_list.go):
// callers must not modify it.
func (s *Snap) Nodes() []*messages.Node {
	if c := s.nodeList(); c != nil {
		return c.nodes
	}
	return list[*messages.Node](s.txn, TableNodes, idxID)
}

// NodeUsage reports the CPU (MHz), memory (MB) and disk (MB) held by the
// non-terminal allocations on a node, without scanning them (the
// scheduler's optional NodeUsageSource).
func (s *Snap) NodeUsage(nodeID string) (cpuShares, memoryMB, diskMB int64) {
	u, ok := s.allocs.usage.Get(nodeID)
	if !ok {
		return 0, 0, 0
	}
	return u.CPU, u.MemoryMB, u.DiskMB
}

// NodeReservedCores returns the core IDs the non-terminal allocations on a
// node reserve, sorted (one entry per holder), without scanning them (the
// scheduler's optional NodeCoresSource). Callers must not modify it.
func (s *Snap) NodeReservedCores(nodeID string) []uint32 {
	u, ok := s.allocs.usage.Get(nodeID)
	if !ok {
		return nil
	}
	return u.Cores
}

// DisconnectWindow is the longest disconnect window of the allocations
// on a node that are meant to run and not over on the client (each read
// from its job version), kept up to date on every alloc write so that the
// node actor never walks the node's allocations for it.
func (s *Snap) DisconnectWindow(nodeID string) time.Duration {
	c, _ := s.allocs.nodeWindows.Get(nodeID)
	return c.longest()
}

// liveAllocs is how many non-terminal allocations a node holds.
func (s *Snap) liveAllocs(nodeID string) int64 {
	u, ok := s.allocs.usage.Get(nodeID)
	if !ok {
		return 0
	}
	return u.Allocs
}
