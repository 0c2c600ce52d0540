package volume

import (
	"encoding/json"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Our messages encode with encoding/json into JSON that Nomad's own Go
// client decodes.
func TestCSIVolumeJSONDecodesIntoNomadAPI(t *testing.T) {
	vol := testVolume("vol1", true)
	vol.Provider, vol.ProviderVersion = "troupe.hostpath", "0.1.0"
	vol.MountOptions = &messages.CSIMountOptions{FSType: "ext4", MountFlags: []string{"noatime"}}
	vol.Secrets = map[string]string{"token": "x"}
	vol.Topologies = []*messages.CSITopology{{Segments: map[string]string{"rack": "r1"}}}
	vol.RequestedCapacityMin, vol.Capacity = 1<<30, 2<<30
	vol.ControllersHealthy, vol.NodesHealthy, vol.NodesExpected = 1, 2, 2
	vol.CreateIndex, vol.ModifyIndex = 10, 12
	require.NoError(t, state.ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a1", "n1", state.ModeWrite, messages.CSIAccessMultiNodeSingleWriter)}, 5))
	require.NoError(t, state.ApplyClaimVolume(vol, &messages.ClaimVolume{Claim: testClaim("a2", "n2", state.ModeRead, messages.CSIAccessMultiNodeSingleWriter)}, 6))
	require.NoError(t, state.ApplyUpdateClaimState(vol, &messages.UpdateClaimState{AllocationID: "a1", State: "taken",
		PublishContext: map[string]string{"dev": "/dev/xvdf"}, ControllerPublished: true}, 7))

	raw, err := json.Marshal(vol)
	require.NoError(t, err)
	var got nomad.CSIVolume
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "vol1", got.ID)
	require.Equal(t, "hostpath", got.PluginID)
	require.True(t, got.Schedulable)
	require.True(t, got.ControllerRequired)
	require.Equal(t, nomad.CSIVolumeAccessModeMultiNodeSingleWriter, got.AccessMode)
	require.Equal(t, nomad.CSIVolumeAttachmentModeFilesystem, got.AttachmentMode)
	require.Equal(t, "ext4", got.MountOptions.FSType)
	require.Equal(t, "r1", got.Topologies[0].Segments["rack"])
	require.Len(t, got.RequestedCapabilities, len(state.AccessModes()))
	require.EqualValues(t, 2<<30, got.Capacity)
	require.Equal(t, 2, got.NodesExpected)
	require.EqualValues(t, 12, got.ModifyIndex)

	var back messages.CSIVolume
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Len(t, back.Claims, 2)
	require.Equal(t, "/dev/xvdf", back.Claims[0].PublishContext["dev"])
}

func TestCSIPluginJSONDecodesIntoNomadAPI(t *testing.T) {
	p := &messages.CSIPlugin{ID: "hostpath", Provider: "troupe.hostpath", Version: "0.1.0", ControllerRequired: true,
		Controllers: map[string]*messages.CSIInfo{"n1": {PluginID: "hostpath", AllocID: "p1", Healthy: true,
			UpdateTime: "2024-05-01T10:00:00Z", ControllerInfo: &messages.CSIControllerInfo{SupportsAttachDetach: true}}},
		Nodes: map[string]*messages.CSIInfo{"n1": {PluginID: "hostpath", Healthy: false, HealthDescription: "probe failed",
			NodeInfo: &messages.CSINodeInfo{ID: "ext-n1", MaxVolumes: 8, RequiresNodeStageVolume: true}}},
		ControllersHealthy: 1, ControllersExpected: 1, NodesExpected: 1}
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	var got nomad.CSIPlugin
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "hostpath", got.ID)
	require.True(t, got.Controllers["n1"].Healthy)
	require.Equal(t, 2024, got.Controllers["n1"].UpdateTime.Year())
	require.True(t, got.Controllers["n1"].ControllerInfo.SupportsAttachDetach)
	require.True(t, got.Nodes["n1"].NodeInfo.RequiresNodeStageVolume)
	require.EqualValues(t, 8, got.Nodes["n1"].NodeInfo.MaxVolumes)
	require.Equal(t, 1, got.ControllersHealthy)
}

// The register request Nomad's client sends decodes into our CSIVolume.
func TestNomadVolumeSpecDecodesIntoCSIVolume(t *testing.T) {
	spec := nomad.CSIVolume{ID: "vol1", Name: "vol1", ExternalID: "ext", PluginID: "hostpath",
		RequestedCapabilities: []*nomad.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}},
		MountOptions:          &nomad.CSIMountOptions{FSType: "xfs"}, Parameters: map[string]string{"a": "b"}}
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	var got messages.CSIVolume
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "ext", got.ExternalID)
	require.Equal(t, messages.CSIAccessSingleNodeWriter, got.RequestedCapabilities[0].AccessMode)
	require.Equal(t, "xfs", got.MountOptions.FSType)
	require.Equal(t, "b", got.Parameters["a"])
}
