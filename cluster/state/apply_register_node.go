package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyRegisterNode upserts a node and stores the evaluations it came
// with (Eval as well: entries written by an older version). Re-registering keeps the CreateIndex,
// and the drain and eligibility the operator set unless the node sends
// its own. A node registered with a secret is re-registered only with
// that secret (the leader refuses others before proposing; this keeps a
// race of two registrations from swapping it).
func applyRegisterNode(w *writeTxn, c *messages.RegisterNode) any {
	n := c.GetNode()
	if n == nil || n.ID == "" {
		return fmt.Errorf("%w: RegisterNode without a node ID", ErrBadCommand)
	}
	if err := w.nodeJoinsPool(n); err != nil {
		return err
	}
	old := w.read().NodeByID(n.ID)
	if old != nil && old.SecretID != "" && old.SecretID != n.SecretID {
		return fmt.Errorf("%w: node %q", ErrNodeSecretMismatch, n.ID)
	}
	n.CreateIndex = w.index
	if old != nil {
		n.CreateIndex = old.CreateIndex
		if n.SchedulingEligibility == "" {
			n.SchedulingEligibility = old.SchedulingEligibility
		}
		if !n.Drain && n.DrainStrategy == nil {
			n.Drain, n.DrainStrategy = old.Drain, old.DrainStrategy
		}
		if n.StatusUpdatedAt == 0 && n.Status == old.Status {
			n.StatusUpdatedAt = old.StatusUpdatedAt
		}
	}
	if n.SchedulingEligibility == "" {
		n.SchedulingEligibility = messages.NodeSchedulingEligible
	}
	if n.StatusUpdatedAt == 0 {
		n.StatusUpdatedAt = w.now / 1e9
	}
	n.ModifyIndex = w.index
	w.putNode(n)
	w.putEval(c.GetEval())
	w.putEvals(c.GetEvals())
	return nil
}
