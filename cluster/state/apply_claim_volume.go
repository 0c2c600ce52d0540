package state

import "github.com/troupe-dev/troupe/messages"

// applyClaimVolume adds a claim to a volume (ApplyClaimVolume). Claiming
// again for the same allocation changes nothing.
func applyClaimVolume(w *writeTxn, c *messages.ClaimVolume) any {
	old, v, err := w.editVolume(c.GetVolumeID())
	if err != nil {
		return err
	}
	if err := ApplyClaimVolume(v, c, w.now); err != nil {
		return err
	}
	w.updateVolume(old, v)
	return nil
}
