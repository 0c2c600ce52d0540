package state

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// defaultNamespace is the namespace of a volume registered without one.
const defaultNamespace = "default"

// applyRegisterVolume stores a new volume, or updates a registered one
// keeping its claims and modes in use (and its capacity and topologies when
// the update leaves them empty: the controller set them at create). A
// claimed volume may not change plugin, external ID or drop the capability
// its claims use. Plugin health is copied in from the stored plugin.
func applyRegisterVolume(w *writeTxn, c *messages.RegisterVolume) any {
	v := c.GetVolume()
	if v == nil {
		return fmt.Errorf("%w: RegisterVolume without a volume", ErrBadCommand)
	}
	if v.Namespace == "" {
		v.Namespace = defaultNamespace
	}
	if err := validateVolume(v); err != nil {
		return err
	}
	if err := w.inNamespace(v.Namespace, fmt.Sprintf("volume %q", v.ID)); err != nil {
		return err
	}
	if other := w.read().CSIVolumeAnyNamespace(v.ID); other != nil && other.Namespace != v.Namespace {
		return fmt.Errorf("%w: volume ID %q is already used in namespace %q", ErrInvalidVolume, v.ID, other.Namespace)
	}
	old := w.read().CSIVolumeByID(v.Namespace, v.ID)
	v.Claims, v.AccessMode, v.AttachmentMode = nil, "", ""
	v.CreateIndex, v.CreateTime = w.index, w.now
	if old != nil {
		if err := checkVolumeUpdate(old, v); err != nil {
			return err
		}
		v.Claims, v.AccessMode, v.AttachmentMode = old.Claims, old.AccessMode, old.AttachmentMode
		v.CreateIndex, v.CreateTime = old.CreateIndex, old.CreateTime
		if v.Capacity == 0 {
			v.Capacity = old.Capacity
		}
		if len(v.Topologies) == 0 {
			v.Topologies = old.Topologies
		}
	}
	WithPluginHealth(v, w.read().CSIPluginByID(v.PluginID))
	v.ModifyIndex, v.ModifyTime = w.index, w.now
	w.putVolume(v)
	return nil
}

func validateVolume(v *messages.CSIVolume) error {
	if v.ID == "" {
		return fmt.Errorf("%w: no ID", ErrInvalidVolume)
	}
	if v.PluginID == "" {
		return fmt.Errorf("%w: volume %q: no plugin ID", ErrInvalidVolume, v.ID)
	}
	for _, cp := range v.RequestedCapabilities {
		if !knownAccessMode(cp.GetAccessMode()) || !knownAttachmentMode(cp.GetAttachmentMode()) {
			return fmt.Errorf("%w: volume %q: unknown capability %q/%q", ErrInvalidVolume, v.ID,
				cp.GetAccessMode(), cp.GetAttachmentMode())
		}
	}
	return nil
}

// checkVolumeUpdate refuses an update that would pull a claimed volume
// from under its claims.
func checkVolumeUpdate(old, v *messages.CSIVolume) error {
	n := len(old.Claims)
	if n == 0 {
		return nil
	}
	switch {
	case v.PluginID != old.PluginID:
		return fmt.Errorf("%w: volume %q has %d claim(s): plugin ID cannot change from %q to %q",
			ErrVolumeInUse, v.ID, n, old.PluginID, v.PluginID)
	case v.ExternalID != old.ExternalID:
		return fmt.Errorf("%w: volume %q has %d claim(s): external ID cannot change from %q to %q",
			ErrVolumeInUse, v.ID, n, old.ExternalID, v.ExternalID)
	}
	probe := &messages.CSIVolumeClaim{AccessMode: old.AccessMode, AttachmentMode: old.AttachmentMode}
	if old.AccessMode != "" && !ClaimsOf(v).supports(probe) {
		return fmt.Errorf("%w: volume %q has %d claim(s) using %s/%s, which the new capabilities drop",
			ErrVolumeInUse, v.ID, n, old.AccessMode, old.AttachmentMode)
	}
	return nil
}
