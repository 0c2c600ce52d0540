package agent

import (
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// probeCSI fingerprints the CSI plugin on socket (node.ProbeCSI): plugin
// info, readiness, and the controller and/or node instance it offers.
func probeCSI(ctx context.Context, socket, pluginID, pluginType string) (ctrl, node *messages.CSIInfo, err error) {
	c, err := csi.Dial(ctx, socket)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	name, version, err := c.PluginInfo(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("GetPluginInfo: %w", err)
	}
	ready, err := c.Probe(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("Probe: %w", err)
	}
	if !ready {
		return nil, nil, fmt.Errorf("Probe: plugin %s is not ready", name)
	}
	pcaps, err := c.PluginCapabilities(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("GetPluginCapabilities: %w", err)
	}
	base := func() *messages.CSIInfo {
		return &messages.CSIInfo{PluginID: pluginID, Healthy: true, HealthDescription: "healthy", Provider: name,
			ProviderVersion: version, RequiresControllerPlugin: pcaps.ControllerService,
			RequiresTopologies: pcaps.VolumeAccessibility}
	}
	if pluginType != "node" {
		cc, err := c.ControllerCapabilities(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("ControllerGetCapabilities: %w", err)
		}
		ctrl = base()
		ctrl.ControllerInfo = &messages.CSIControllerInfo{SupportsCreateDelete: cc.CreateDelete,
			SupportsAttachDetach: cc.PublishUnpublish, SupportsListVolumes: cc.ListVolumes,
			SupportsGetCapacity: cc.GetCapacity, SupportsCreateDeleteSnapshot: cc.Snapshots,
			SupportsListSnapshots: cc.ListSnapshots, SupportsClone: cc.Clone, SupportsReadOnlyAttach: cc.PublishReadOnly,
			SupportsExpand: cc.Expand, SupportsListVolumesAttachedNodes: cc.ListPublishedNodes}
	}
	if pluginType != "controller" {
		ni, err := c.NodeInfo(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("NodeGetInfo: %w", err)
		}
		nc, err := c.NodeCapabilities(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("NodeGetCapabilities: %w", err)
		}
		node = base()
		node.NodeInfo = &messages.CSINodeInfo{ID: ni.NodeID, MaxVolumes: ni.MaxVolumes,
			RequiresNodeStageVolume: nc.StageUnstage, SupportsStats: nc.GetVolumeStats, SupportsExpand: nc.Expand}
		if len(ni.Topology) > 0 {
			// The scheduler places a claim only where this topology
			// satisfies one of the volume's.
			node.NodeInfo.AccessibleTopology = &messages.CSITopology{Segments: ni.Topology}
		}
	}
	return ctrl, node, nil
}
