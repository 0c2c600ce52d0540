package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// applyDeregisterVolume removes a volume that has no claims; with Force,
// one whose claims are all past taken (they are dropped, with no
// controller detach), as the volume actor decides (CheckVolumeUnused).
func applyDeregisterVolume(w *writeTxn, c *messages.DeregisterVolume) any {
	v := w.read().CSIVolumeAnyNamespace(c.GetVolumeID())
	if v == nil {
		return fmt.Errorf("%w: %q", ErrVolumeNotFound, c.GetVolumeID())
	}
	if err := CheckVolumeUnused(v, c.GetForce()); err != nil {
		return err
	}
	w.deleteVolume(v)
	return nil
}
