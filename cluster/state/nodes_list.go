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
}

// nodeList returns the shared list for this snapshot's nodes, nil for a
// write transaction's view of itself (its nodes may not be committed).
func (s *Snap) nodeList() *nodeList {
	if s.store == nil {
		return nil
	}
	index := s.Index(TableNodes)
	if c := s.store.nodeList.Load(); c != nil && c.db == s.db && c.index == index {
		return c
	}
	c := &nodeList{db: s.db, index: index, nodes: slices.Clip(list[*messages.Node](s.txn, TableNodes, idxID))}
	s.store.nodeList.Store(c)
	return c
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
