package state

import "github.com/troupe-dev/troupe/messages"

// CSIVolumeByID returns a volume, or nil.
func (s *Snap) CSIVolumeByID(ns, id string) *messages.CSIVolume {
	return first[*messages.CSIVolume](s.txn, TableCSIVolumes, idxID, ns, id)
}

// CSIVolumeAnyNamespace returns the volume with that ID in whichever
// namespace holds it, or nil. Volume IDs are unique across namespaces
// (RegisterVolume refuses a second one), as the volume commands and the
// volume actors name a volume by ID alone.
func (s *Snap) CSIVolumeAnyNamespace(id string) *messages.CSIVolume {
	return first[*messages.CSIVolume](s.txn, TableCSIVolumes, idxVolumeID, id)
}

// CSIVolumes returns every volume, sorted by namespace then ID.
func (s *Snap) CSIVolumes() []*messages.CSIVolume {
	return list[*messages.CSIVolume](s.txn, TableCSIVolumes, idxID)
}

// CSIVolumesByNamespace returns the volumes of one namespace, by ID.
func (s *Snap) CSIVolumesByNamespace(ns string) []*messages.CSIVolume {
	return list[*messages.CSIVolume](s.txn, TableCSIVolumes, idxID+"_prefix", ns)
}

// CSIVolumesByPlugin returns the volumes of a plugin, sorted by namespace
// then ID.
func (s *Snap) CSIVolumesByPlugin(pluginID string) []*messages.CSIVolume {
	return list[*messages.CSIVolume](s.txn, TableCSIVolumes, idxPlugin, pluginID)
}

// CSIPluginByID returns a plugin, or nil.
func (s *Snap) CSIPluginByID(id string) *messages.CSIPlugin {
	return first[*messages.CSIPlugin](s.txn, TableCSIPlugins, idxID, id)
}

// CSIPlugins returns every plugin, by ID.
func (s *Snap) CSIPlugins() []*messages.CSIPlugin {
	return list[*messages.CSIPlugin](s.txn, TableCSIPlugins, idxID)
}

// csiVolumesClaimedBy returns the volumes on which allocation allocID
// holds a claim, in any state short of freed (a freed claim leaves its
// volume).
func (s *Snap) csiVolumesClaimedBy(allocID string) []*messages.CSIVolume {
	return list[*messages.CSIVolume](s.txn, TableCSIVolumes, idxClaimAlloc, allocID)
}
