package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyNodeDrain starts or ends a node's drain. A draining node is
// ineligible; the scheduler migrates its allocations away.
func applyNodeDrain(w *writeTxn, c *messages.UpdateNodeDrain) any {
	old := w.read().NodeByID(c.NodeID)
	if old == nil {
		return fmt.Errorf("%w: %q", ErrNodeNotFound, c.NodeID)
	}
	n := copyNode(old)
	n.DrainStrategy = c.GetDrainStrategy()
	n.Drain = n.DrainStrategy != nil
	switch {
	case n.Drain:
		n.SchedulingEligibility = messages.NodeSchedulingIneligible
	case c.GetMarkEligible():
		n.SchedulingEligibility = messages.NodeSchedulingEligible
	}
	n.ModifyIndex = w.index
	w.putNode(n)
	w.putEvals(c.GetEvals())
	return nil
}
