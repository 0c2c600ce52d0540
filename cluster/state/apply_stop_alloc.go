package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyStopAlloc sets one allocation's desired status to stop and stores
// the evaluation that replaces it.
func applyStopAlloc(w *writeTxn, c *messages.StopAlloc) any {
	if w.read().AllocByID(c.AllocID) == nil {
		return fmt.Errorf("%w: %q", ErrAllocNotFound, c.AllocID)
	}
	w.stopAlloc(&messages.AllocStopUpdate{AllocID: c.AllocID, DesiredDescription: c.DesiredDescription})
	w.putEval(c.GetEval())
	return nil
}
