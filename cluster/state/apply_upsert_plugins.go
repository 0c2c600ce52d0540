package state

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// applyUpsertPlugins replaces every plugin instance on a node with the
// client's fingerprint (ApplyUpsertPluginInstances): plugins are created
// with their first instance and deleted with their last, their counts
// recomputed, and every volume of a changed plugin gets its health and
// Schedulable anew (WithPluginHealth).
func applyUpsertPlugins(w *writeTxn, c *messages.UpsertPluginInstances) any {
	if err := validatePluginInstances(c); err != nil {
		return err
	}
	named := map[string]bool{}
	for _, info := range slices.Concat(c.GetControllers(), c.GetNodes()) {
		named[info.GetPluginID()] = true
	}
	stored := map[string]*messages.CSIPlugin{}
	plugins := map[string]*messages.CSIPlugin{}
	for _, p := range w.read().CSIPlugins() {
		if named[p.ID] || p.Controllers[c.NodeID] != nil || p.Nodes[c.NodeID] != nil {
			stored[p.ID], plugins[p.ID] = p, proto.Clone(p).(*messages.CSIPlugin)
		}
	}
	for _, id := range ApplyUpsertPluginInstances(plugins, c) {
		old, p := stored[id], plugins[id]
		switch {
		case p == nil:
			w.deletePlugin(old)
		case old != nil && proto.Equal(old, p):
			continue
		default:
			w.putPlugin(old, p)
		}
		w.refreshVolumes(id, p)
	}
	return nil
}

func validatePluginInstances(c *messages.UpsertPluginInstances) error {
	if c.GetNodeID() == "" {
		return fmt.Errorf("%w: UpsertPluginInstances without a node ID", ErrBadCommand)
	}
	for _, info := range slices.Concat(c.GetControllers(), c.GetNodes()) {
		if info.GetPluginID() == "" {
			return fmt.Errorf("%w: UpsertPluginInstances: node %q: instance without a plugin ID", ErrBadCommand, c.GetNodeID())
		}
	}
	return nil
}
