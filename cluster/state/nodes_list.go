package state

import (
	"slices"
	"sync"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// nodeList is every node as of one index of the nodes table in one
// database (Restore starts another), and the nodes of each pool asked
// for, filtered from it.
//
// The scheduler asks for the nodes (of a pool) once per evaluation;
// walking 10,000 nodes in memdb each time was a tenth of its work. The
// store keeps the last list built, and every snapshot of the same nodes
// shares it.
type nodeList struct {
	db    *memdb.MemDB
	index uint64
	nodes []*messages.Node
	pools sync.Map // pool name -> []*messages.Node

	byIDOnce sync.Once
	byID     map[string]*messages.Node
}

// node returns the node with that ID, or nil: a map built on first use
// (the node actors and the plan applier look nodes up by ID thousands of
// times a second; memdb's radix tree costs several cache misses each).
func (c *nodeList) node(id string) *messages.Node {
	c.byIDOnce.Do(func() {
		c.byID = make(map[string]*messages.Node, len(c.nodes))
		for _, n := range c.nodes {
			c.byID[n.ID] = n
		}
	})
	return c.byID[id]
}

// nodeList returns the shared list for this snapshot's nodes, nil for a
// write transaction's view of itself (its nodes may not be committed).
func (s *Snap) nodeList() *nodeList {
	if s.store == nil {
		return nil
	}
	index := s.Index(TableNodes)
	if c := s.builtNodeList(index); c != nil {
		return c
	}
	c := &nodeList{db: s.db, index: index, nodes: slices.Clip(list[*messages.Node](s.txn, TableNodes, idxID))}
	s.store.nodeList.Store(c)
	return c
}

// builtNodeList is the shared list when one was built for this
// snapshot's nodes (at index of the nodes table), else nil. Lookups of one
// node use it only when it exists: building one per registration of
// 10,000 nodes would cost O(nodes) each.
func (s *Snap) builtNodeList(index uint64) *nodeList {
	if c := s.store.nodeList.Load(); c != nil && c.db == s.db && c.index == index {
		return c
	}
	return nil
}

// sharedNodes is the store's shared node list as this transaction sees
// the nodes, or nil once the transaction wrote a node (the list holds
// committed nodes only).
func (w *writeTxn) sharedNodes() *nodeList {
	if w.changed[TableNodes] || w.noNodes {
		return nil
	}
	if w.nodes == nil {
		db, _ := w.store.current()
		s := &Snap{txn: w.txn, allocs: w.base, store: w.store, db: db}
		w.nodes = s.builtNodeList(s.Index(TableNodes))
		w.noNodes = w.nodes == nil // none is built during this transaction
	}
	return w.nodes
}

// node returns a node as this transaction sees it.
func (w *writeTxn) node(id string) *messages.Node {
	if l := w.sharedNodes(); l != nil {
		return l.node(id)
	}
	return w.read().NodeByID(id)
}

// inPool returns the nodes of one pool, sorted by ID.
func (c *nodeList) inPool(pool string) []*messages.Node {
	if v, ok := c.pools.Load(pool); ok {
		return v.([]*messages.Node)
	}
	var out []*messages.Node
	for _, n := range c.nodes {
		if PoolOrDefault(n.NodePool) == pool {
			out = append(out, n)
		}
	}
	c.pools.Store(pool, out)
	return out
}
