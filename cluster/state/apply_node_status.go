package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyNodeStatus records a node's status (ready, down, disconnected...)
// and the evaluations that follow from it.
func applyNodeStatus(w *writeTxn, c *messages.UpdateNodeStatus) any {
	old := w.read().NodeByID(c.NodeID)
	if old == nil {
		return fmt.Errorf("%w: %q", ErrNodeNotFound, c.NodeID)
	}
	n := copyNode(old)
	n.Status, n.StatusDescription = c.Status, c.StatusDescription
	n.StatusUpdatedAt = w.now / 1e9
	n.ModifyIndex = w.index
	w.putNode(n)
	if n.Status == messages.NodeStatusDown {
		w.dropNodeServices(n.ID)
	}
	w.putEvals(c.GetEvals())
	return nil
}
