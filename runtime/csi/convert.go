package csi

import (
	"maps"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

func pluginCapsFromCSI(caps []*csipb.PluginCapability) PluginCaps {
	var out PluginCaps
	for _, c := range caps {
		switch c.GetService().GetType() {
		case csipb.PluginCapability_Service_CONTROLLER_SERVICE:
			out.ControllerService = true
		case csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS:
			out.VolumeAccessibility = true
		}
		switch c.GetVolumeExpansion().GetType() {
		case csipb.PluginCapability_VolumeExpansion_ONLINE:
			out.OnlineExpansion = true
		case csipb.PluginCapability_VolumeExpansion_OFFLINE:
			out.OfflineExpansion = true
		}
	}
	return out
}

// controllerCapFields maps each controller RPC capability to its field.
func controllerCapFields(c *ControllerCaps) map[csipb.ControllerServiceCapability_RPC_Type]*bool {
	return map[csipb.ControllerServiceCapability_RPC_Type]*bool{
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME:         &c.CreateDelete,
		csipb.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME:     &c.PublishUnpublish,
		csipb.ControllerServiceCapability_RPC_LIST_VOLUMES:                 &c.ListVolumes,
		csipb.ControllerServiceCapability_RPC_GET_CAPACITY:                 &c.GetCapacity,
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT:       &c.Snapshots,
		csipb.ControllerServiceCapability_RPC_LIST_SNAPSHOTS:               &c.ListSnapshots,
		csipb.ControllerServiceCapability_RPC_CLONE_VOLUME:                 &c.Clone,
		csipb.ControllerServiceCapability_RPC_PUBLISH_READONLY:             &c.PublishReadOnly,
		csipb.ControllerServiceCapability_RPC_EXPAND_VOLUME:                &c.Expand,
		csipb.ControllerServiceCapability_RPC_LIST_VOLUMES_PUBLISHED_NODES: &c.ListPublishedNodes,
		csipb.ControllerServiceCapability_RPC_GET_VOLUME:                   &c.GetVolume,
	}
}

func controllerCapsFromCSI(caps []*csipb.ControllerServiceCapability) ControllerCaps {
	var out ControllerCaps
	fields := controllerCapFields(&out)
	for _, c := range caps {
		if f, ok := fields[c.GetRpc().GetType()]; ok {
			*f = true
		}
	}
	return out
}

func nodeCapsFromCSI(caps []*csipb.NodeServiceCapability) NodeCaps {
	var out NodeCaps
	for _, c := range caps {
		switch c.GetRpc().GetType() {
		case csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME:
			out.StageUnstage = true
		case csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS:
			out.GetVolumeStats = true
		case csipb.NodeServiceCapability_RPC_EXPAND_VOLUME:
			out.Expand = true
		}
	}
	return out
}

// cloneMap copies m; nil or empty gives nil.
func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func topologiesToCSI(ts []map[string]string) []*csipb.Topology {
	var out []*csipb.Topology
	for _, t := range ts {
		out = append(out, &csipb.Topology{Segments: cloneMap(t)})
	}
	return out
}

func topologiesFromCSI(ts []*csipb.Topology) []map[string]string {
	var out []map[string]string
	for _, t := range ts {
		out = append(out, cloneMap(t.GetSegments()))
	}
	return out
}

// capabilitiesToCSI converts a list of capabilities, failing on the first
// unknown mode.
func capabilitiesToCSI(caps []*VolumeCapability) ([]*csipb.VolumeCapability, error) {
	out := make([]*csipb.VolumeCapability, 0, len(caps))
	for _, c := range caps {
		pc, err := c.ToCSI()
		if err != nil {
			return nil, err
		}
		out = append(out, pc)
	}
	return out, nil
}

func createRequestToCSI(req *CreateRequest) (*csipb.CreateVolumeRequest, error) {
	caps, err := capabilitiesToCSI(req.Capabilities)
	if err != nil {
		return nil, err
	}
	out := &csipb.CreateVolumeRequest{
		Name:               req.Name,
		VolumeCapabilities: caps,
		Parameters:         cloneMap(req.Parameters),
		Secrets:            cloneMap(req.Secrets),
	}
	if req.RequiredBytes > 0 || req.LimitBytes > 0 {
		out.CapacityRange = &csipb.CapacityRange{RequiredBytes: req.RequiredBytes, LimitBytes: req.LimitBytes}
	}
	out.VolumeContentSource = contentSource(req.SnapshotID, req.SourceVolumeID)
	if len(req.RequisiteTopologies)+len(req.PreferredTopologies) > 0 {
		out.AccessibilityRequirements = &csipb.TopologyRequirement{
			Requisite: topologiesToCSI(req.RequisiteTopologies),
			Preferred: topologiesToCSI(req.PreferredTopologies),
		}
	}
	return out, nil
}

func contentSource(snapshotID, volumeID string) *csipb.VolumeContentSource {
	switch {
	case snapshotID != "":
		return &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snapshotID}}}
	case volumeID != "":
		return &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{
			Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: volumeID}}}
	}
	return nil
}

func volumeFromCSI(v *csipb.Volume) *Volume {
	return &Volume{
		ID:            v.GetVolumeId(),
		CapacityBytes: v.GetCapacityBytes(),
		Context:       cloneMap(v.GetVolumeContext()),
		Topologies:    topologiesFromCSI(v.GetAccessibleTopology()),
	}
}

func snapshotFromCSI(s *csipb.Snapshot) *Snapshot {
	out := &Snapshot{
		ID:             s.GetSnapshotId(),
		SourceVolumeID: s.GetSourceVolumeId(),
		SizeBytes:      s.GetSizeBytes(),
		ReadyToUse:     s.GetReadyToUse(),
	}
	if s.GetCreationTime() != nil {
		out.CreateTime = s.GetCreationTime().AsTime()
	}
	return out
}
