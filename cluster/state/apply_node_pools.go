package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyUpsertNodePools creates or replaces node pools (CheckUpsertNodePools
// first: one bad pool stores none). A replaced pool keeps its CreateIndex.
func applyUpsertNodePools(w *writeTxn, c *messages.UpsertNodePools) any {
	if err := CheckUpsertNodePools(c.GetPools()); err != nil {
		return err
	}
	for _, p := range c.GetPools() {
		w.putNodePool(p)
	}
	return nil
}

// applyDeleteNodePools deletes node pools that CheckDeleteNodePools lets
// go: all of them, or none.
func applyDeleteNodePools(w *writeTxn, c *messages.DeleteNodePools) any {
	if err := CheckDeleteNodePools(w.read(), c.GetNames()); err != nil {
		return err
	}
	for _, name := range c.GetNames() {
		if p := w.read().NodePoolByName(name); p != nil {
			w.delete(TableNodePools, p)
		}
	}
	w.changed[TableNodePools] = true
	return nil
}

// putNodePool stores p at this index, keeping the CreateIndex of the pool
// it replaces.
func (w *writeTxn) putNodePool(p *messages.NodePool) {
	p.CreateIndex = w.index
	if old := w.read().NodePoolByName(p.Name); old != nil {
		p.CreateIndex = old.CreateIndex
	}
	p.ModifyIndex = w.index
	w.insert(TableNodePools, p)
	w.changed[TableNodePools] = true
}

// nodeJoinsPool sets a registering node's pool (NodeNodePool) and creates
// the pool when it does not exist yet, as Nomad does.
func (w *writeTxn) nodeJoinsPool(n *messages.Node) error {
	pool, err := NodeNodePool(n.NodePool)
	if err != nil {
		return fmt.Errorf("node %q: %w", n.ID, err)
	}
	n.NodePool = pool
	if w.read().NodePoolByName(pool) == nil {
		w.putNodePool(&messages.NodePool{Name: pool})
	}
	return nil
}

// jobInPool sets a registering job's pool ("default" when it names none)
// and refuses a pool that does not exist.
func (w *writeTxn) jobInPool(j *messages.Job) error {
	j.NodePool = PoolOrDefault(j.NodePool)
	if w.read().NodePoolByName(j.NodePool) == nil {
		return fmt.Errorf("%w: job %q is in nonexistent node pool %q", ErrInvalidNodePool, j.ID, j.NodePool)
	}
	return nil
}

// restoreNodePools inserts a snapshot's pools (over the built-in ones a
// fresh store starts with).
func (w *writeTxn) restoreNodePools(pools []*messages.NodePool) {
	for _, p := range pools {
		w.insert(TableNodePools, p)
	}
}
