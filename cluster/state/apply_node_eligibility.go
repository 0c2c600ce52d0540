package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyNodeEligibility records whether a node may receive placements.
func applyNodeEligibility(w *writeTxn, c *messages.UpdateNodeEligibility) any {
	old := w.read().NodeByID(c.NodeID)
	if old == nil {
		return fmt.Errorf("%w: %q", ErrNodeNotFound, c.NodeID)
	}
	n := copyNode(old)
	n.SchedulingEligibility = c.Eligibility
	n.ModifyIndex = w.index
	w.putNode(n)
	w.putEvals(c.GetEvals())
	return nil
}
