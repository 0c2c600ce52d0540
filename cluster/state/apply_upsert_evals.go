package state

import "github.com/troupe-dev/troupe/messages"

// applyUpsertEvals inserts or updates evaluations (an update keeps the
// CreateIndex); pending ones are reported in the event.
func applyUpsertEvals(w *writeTxn, c *messages.UpsertEvals) any {
	w.putEvals(c.GetEvals())
	return nil
}
