package state

import (
	"context"
	"sync"
	"sync/atomic"

	memdb "github.com/hashicorp/go-memdb"
)

// Store is the in-memory, indexed cluster state. The FSM is its only
// writer; any number of goroutines read it through Snapshot and Wait.
//
// Jobs, job versions, evaluations, nodes, CSI volumes and plugins and the
// table indexes live in go-memdb; allocations live in an allocTable (persistent sorted maps) that
// is published together with each memdb commit.
type Store struct {
	mu     sync.RWMutex
	db     *memdb.MemDB
	allocs *allocTable
	reset  chan struct{} // closed when Restore replaces db
	gen    atomic.Uint64 // write transaction generations
	// applied is the raft index of the last applied entry (applied.go).
	applied appliedIndex
	// jobVersions is how many versions of each job are kept.
	jobVersions atomic.Int64
	// nodeList is the last list of every node a snapshot built (nodes.go).
	nodeList atomic.Pointer[nodeList]
	// tables is the last-change index of each watched table as of db, the
	// same numbers as tableIndex's rows, published with db by commit so
	// that a snapshot's Index is a map read, not a memdb lookup per table
	// (the leader's node actors ask for it on every plan). Never modified:
	// commit publishes a new map.
	tables map[string]uint64
	events eventRing // applied commands for the event stream (events.go)
}

// DefaultJobVersions is how many versions of a job a store keeps unless
// told otherwise (Nomad's job_tracked_versions default).
const DefaultJobVersions = 6

// NewStore returns an empty store.
func NewStore() *Store {
	s := &Store{db: newDB(), allocs: newAllocTable(), reset: make(chan struct{})}
	s.jobVersions.Store(DefaultJobVersions)
	return s
}

// SetJobVersions sets how many versions of each job the store keeps (at
// least 1; Nomad's job_tracked_versions). Every server of a cluster must
// keep the same number: it decides what the FSM drops. A job that has
// more versions drops the oldest at its next registration, or when the
// garbage collector trims it.
func (s *Store) SetJobVersions(n int) {
	s.jobVersions.Store(int64(max(n, 1)))
}

// JobVersions is how many versions of each job the store keeps.
func (s *Store) JobVersions() int { return int(s.jobVersions.Load()) }

func newDB() *memdb.MemDB {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		panic(err) // the schema is static; an error is a programming bug
	}
	txn := db.Txn(true)
	for _, t := range watchedTables {
		if err := txn.Insert(tableIndex, &indexEntry{Table: t}); err != nil {
			panic(err)
		}
	}
	for _, p := range builtInNodePools() {
		if err := txn.Insert(TableNodePools, p); err != nil {
			panic(err)
		}
	}
	for _, ns := range builtInNamespaces() {
		if err := txn.Insert(TableNamespaces, ns); err != nil {
			panic(err)
		}
	}
	txn.Commit()
	return db
}

func (s *Store) current() (*memdb.MemDB, chan struct{}) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db, s.reset
}

// begin opens the single write transaction.
func (s *Store) begin() (*memdb.Txn, *allocTable, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.Txn(true), s.allocs, s.gen.Add(1)
}

// commit publishes a write transaction: the memdb commit and the new
// allocation table become visible to Snapshot together.
func (s *Store) commit(txn *memdb.Txn, allocs *allocTable, changed map[string]bool, index uint64) {
	allocs.sync()
	s.mu.Lock()
	defer s.mu.Unlock()
	txn.Commit()
	s.allocs = allocs
	if len(changed) > 0 {
		tables := make(map[string]uint64, len(watchedTables))
		for t, v := range s.tables {
			tables[t] = v
		}
		for t := range changed {
			tables[t] = index
		}
		s.tables = tables
	}
}

// replace swaps in a freshly built state (Restore) and wakes every waiter
// of the old one.
func (s *Store) replace(db *memdb.MemDB, allocs *allocTable, tables map[string]uint64) {
	allocs.sync()
	s.mu.Lock()
	old := s.reset
	s.db, s.allocs, s.reset, s.tables = db, allocs, make(chan struct{}), tables
	s.mu.Unlock()
	close(old)
}

// Snapshot returns a consistent read view of the store. It is cheap (no
// copy) and never goes stale: later writes are not visible through it.
func (s *Store) Snapshot() *Snap {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return &Snap{txn: s.db.Txn(false), allocs: s.allocs, store: s, db: s.db, tables: s.tables}
}

// Wait is a blocking query: it returns as soon as Index(tables...) is
// greater than minIndex, or when ctx ends, and answers the index at that
// time. With no tables it watches every table (as Index does).
func (s *Store) Wait(ctx context.Context, minIndex uint64, tables ...string) uint64 {
	if len(tables) == 0 {
		tables = watchedTables
	}
	for {
		db, reset := s.current()
		txn := db.Txn(false)
		ws := memdb.NewWatchSet()
		ws.Add(reset)
		idx := maxIndex(txn, ws, tables)
		if idx > minIndex {
			return idx
		}
		if err := ws.WatchCtx(ctx); err != nil {
			return s.Snapshot().Index(tables...)
		}
	}
}

// maxIndex reads the last-change index of the tables, adding each entry's
// watch channel to ws when ws is not nil.
func maxIndex(txn *memdb.Txn, ws memdb.WatchSet, tables []string) uint64 {
	var max uint64
	for _, t := range tables {
		ch, raw, err := txn.FirstWatch(tableIndex, idxID, t)
		if err != nil {
			continue
		}
		if ws != nil {
			ws.Add(ch)
		}
		if e, ok := raw.(*indexEntry); ok && e.Value > max {
			max = e.Value
		}
	}
	return max
}
