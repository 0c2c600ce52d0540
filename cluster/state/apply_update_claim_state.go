package state

import "github.com/troupe-dev/troupe/messages"

// applyUpdateClaimState moves one claim of a volume to a new state
// (ApplyUpdateClaimState); freed removes it.
func applyUpdateClaimState(w *writeTxn, c *messages.UpdateClaimState) any {
	old, v, err := w.editVolume(c.GetVolumeID())
	if err != nil {
		return err
	}
	if err := ApplyUpdateClaimState(v, c, w.now); err != nil {
		return err
	}
	w.updateVolume(old, v)
	return nil
}
