package state

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// putVolume stores a (new object for a) volume.
func (w *writeTxn) putVolume(v *messages.CSIVolume) {
	w.insert(TableCSIVolumes, v)
	w.changed[TableCSIVolumes] = true
	w.ev.volume(v.ID)
}

func (w *writeTxn) deleteVolume(v *messages.CSIVolume) {
	w.delete(TableCSIVolumes, v)
	w.changed[TableCSIVolumes] = true
	w.ev.volume(v.ID)
}

// editVolume returns a deep copy of the stored volume with that ID, to
// change and hand to updateVolume with the original.
func (w *writeTxn) editVolume(id string) (old, v *messages.CSIVolume, err error) {
	old = w.read().CSIVolumeAnyNamespace(id)
	if old == nil {
		return nil, nil, fmt.Errorf("%w: %q", ErrVolumeNotFound, id)
	}
	return old, proto.Clone(old).(*messages.CSIVolume), nil
}

// updateVolume stores v, an edited copy of old, unless nothing changed
// (then neither the indexes nor the event move).
func (w *writeTxn) updateVolume(old, v *messages.CSIVolume) {
	if proto.Equal(old, v) {
		return
	}
	v.ModifyIndex, v.ModifyTime = w.index, w.now
	w.putVolume(v)
}

// putPlugin stores a (new object for a) plugin, setting its indexes and
// times; old is the one it replaces, nil for a new plugin.
func (w *writeTxn) putPlugin(old, p *messages.CSIPlugin) {
	p.CreateIndex, p.CreateTime = w.index, w.now
	if old != nil {
		p.CreateIndex, p.CreateTime = old.CreateIndex, old.CreateTime
	}
	p.ModifyIndex, p.ModifyTime = w.index, w.now
	w.insert(TableCSIPlugins, p)
	w.changed[TableCSIPlugins] = true
	w.ev.plugin(p.ID)
}

func (w *writeTxn) deletePlugin(p *messages.CSIPlugin) {
	w.delete(TableCSIPlugins, p)
	w.changed[TableCSIPlugins] = true
	w.ev.plugin(p.ID)
}

// refreshVolumes copies the plugin's health into every volume of it (p
// nil: the plugin is gone) and stores those that changed.
func (w *writeTxn) refreshVolumes(pluginID string, p *messages.CSIPlugin) {
	for _, old := range w.read().CSIVolumesByPlugin(pluginID) {
		v := shallowCopy(old) // WithPluginHealth only assigns scalars
		WithPluginHealth(v, p)
		w.updateVolume(old, v)
	}
}
