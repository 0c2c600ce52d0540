package state

import (
	"github.com/troupe-dev/troupe/messages"
)

// testVolume is a volume to register with every access mode as capability.
func testVolume(id string, controllerRequired bool) *messages.CSIVolume {
	v := &messages.CSIVolume{ID: id, Name: id, Namespace: "default", ExternalID: "ext-" + id,
		PluginID: "hostpath", ControllerRequired: controllerRequired, Schedulable: true}
	for _, mode := range AccessModes() {
		v.RequestedCapabilities = append(v.RequestedCapabilities,
			&messages.CSIVolumeCapability{AccessMode: mode, AttachmentMode: messages.CSIAttachFileSystem})
	}
	return v
}

func testClaim(alloc, node, mode, access string) *messages.CSIVolumeClaim {
	return &messages.CSIVolumeClaim{AllocationID: alloc, NodeID: node, ExternalNodeID: "ext-" + node,
		Mode: mode, AccessMode: access, AttachmentMode: messages.CSIAttachFileSystem}
}

func testInstance(pluginID string, healthy bool) *messages.CSIInfo {
	return &messages.CSIInfo{PluginID: pluginID, Healthy: healthy, RequiresControllerPlugin: true,
		Provider: "troupe.hostpath", ProviderVersion: "0.1.0"}
}

func registerVolume(v *messages.CSIVolume) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterVolume{RegisterVolume: &messages.RegisterVolume{Volume: v}}}
}

func deregisterVolume(id string, force bool) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_DeregisterVolume{DeregisterVolume: &messages.DeregisterVolume{
		VolumeID: id, Force: force}}}
}

func claimVolume(id string, c *messages.CSIVolumeClaim) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_ClaimVolume{ClaimVolume: &messages.ClaimVolume{VolumeID: id, Claim: c}}}
}

func updateClaim(id, alloc string, st ClaimState) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpdateClaimState{UpdateClaimState: &messages.UpdateClaimState{
		VolumeID: id, AllocationID: alloc, State: st.String()}}}
}

func upsertPlugins(nodeID string, controllers, nodes []*messages.CSIInfo) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpsertPluginInstances{UpsertPluginInstances: &messages.UpsertPluginInstances{
		NodeID: nodeID, Controllers: controllers, Nodes: nodes}}}
}

// claimStates maps alloc -> claim state of a stored volume.
func claimStates(v *messages.CSIVolume) map[string]string {
	out := map[string]string{}
	for _, c := range v.GetClaims() {
		out[c.GetAllocationID()] = c.GetState()
	}
	return out
}
