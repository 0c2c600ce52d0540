package jobspec

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// nomadVolume is a volume built with Nomad's Go client types, as `nomad
// volume register` sends it.
func nomadVolume(id string) *api.CSIVolume {
	return &api.CSIVolume{
		ID: id, Name: id + "-name", Namespace: "prod", ExternalID: "ext-" + id, PluginID: "hostpath",
		RequestedCapacityMin: 10 * gib, RequestedCapacityMax: 20 * gib,
		RequestedCapabilities: []*api.CSIVolumeCapability{
			{AccessMode: api.CSIVolumeAccessModeSingleNodeWriter, AttachmentMode: api.CSIVolumeAttachmentModeFilesystem},
			{AccessMode: api.CSIVolumeAccessModeMultiNodeReader, AttachmentMode: api.CSIVolumeAttachmentModeBlockDevice},
		},
		MountOptions: &api.CSIMountOptions{FSType: "xfs", MountFlags: []string{"noatime"}},
		Secrets:      api.CSISecrets{"token": "s3cret"},
		Parameters:   map[string]string{"type": "gp3"},
		Context:      map[string]string{"share": "/export"},
		RequestedTopologies: &api.CSITopologyRequest{
			Required:  []*api.CSITopology{{Segments: map[string]string{"zone": "a"}}},
			Preferred: []*api.CSITopology{{Segments: map[string]string{"rack": "r2"}}},
		},
		SnapshotID: "snap-" + id,
	}
}

func wantVolume(id string) *messages.CSIVolume {
	return &messages.CSIVolume{
		ID: id, Name: id + "-name", Namespace: "prod", ExternalID: "ext-" + id, PluginID: "hostpath",
		RequestedCapacityMin: 10 * gib, RequestedCapacityMax: 20 * gib,
		RequestedCapabilities: []*messages.CSIVolumeCapability{
			{AccessMode: "single-node-writer", AttachmentMode: "file-system"},
			{AccessMode: "multi-node-reader-only", AttachmentMode: "block-device"},
		},
		MountOptions: &messages.CSIMountOptions{FSType: "xfs", MountFlags: []string{"noatime"}},
		Secrets:      map[string]string{"token": "s3cret"},
		Parameters:   map[string]string{"type": "gp3"},
		Context:      map[string]string{"share": "/export"},
		RequestedTopologies: &messages.CSITopologyRequest{
			Required:  []*messages.CSITopology{{Segments: map[string]string{"zone": "a"}}},
			Preferred: []*messages.CSITopology{{Segments: map[string]string{"rack": "r2"}}},
		},
		SnapshotID: "snap-" + id,
	}
}

func TestParseVolumesJSONFromNomadClient(t *testing.T) {
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	write := api.WriteRequest{Region: "global", Namespace: "prod"}
	cases := []struct {
		name string
		body []byte
		ids  []string
	}{
		{"bare volume", marshal(nomadVolume("a")), []string{"a"}},
		{"register request", marshal(api.CSIVolumeRegisterRequest{Volumes: []*api.CSIVolume{nomadVolume("a"), nomadVolume("b")}, WriteRequest: write}), []string{"a", "b"}},
		{"create request", marshal(api.CSIVolumeCreateRequest{Volumes: []*api.CSIVolume{nomadVolume("c")}, WriteRequest: write}), []string{"c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vols, err := ParseVolumesJSON(tc.body)
			require.NoError(t, err)
			require.Len(t, vols, len(tc.ids))
			for i, id := range tc.ids {
				requireProto(t, wantVolume(id), vols[i])
				require.NoError(t, ValidateVolume(vols[i], false))
			}
		})
	}
}

func TestParseVolumeJSONLegacyModes(t *testing.T) {
	nv := &api.CSIVolume{ID: "v", Name: "v", PluginID: "p", ExternalID: "e",
		AccessMode: api.CSIVolumeAccessModeMultiNodeMultiWriter, AttachmentMode: api.CSIVolumeAttachmentModeFilesystem}
	body, err := json.Marshal(api.CSIVolumeRegisterRequest{Volumes: []*api.CSIVolume{nv}})
	require.NoError(t, err)
	v, err := ParseVolumeJSON(body)
	require.NoError(t, err)
	requireProto(t, &messages.CSIVolume{ID: "v", Name: "v", PluginID: "p", ExternalID: "e",
		RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "multi-node-multi-writer", AttachmentMode: "file-system"}}}, v)

	// With capabilities present, the top-level modes are dropped.
	nv.RequestedCapabilities = []*api.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "block-device"}}
	body, err = json.Marshal(nv)
	require.NoError(t, err)
	v, err = ParseVolumeJSON(body)
	require.NoError(t, err)
	require.Empty(t, v.AccessMode)
	require.Empty(t, v.AttachmentMode)
	requireProto(t, &messages.CSIVolumeCapability{AccessMode: "single-node-writer", AttachmentMode: "block-device"}, v.RequestedCapabilities[0])
}

func TestParseVolumeJSONErrors(t *testing.T) {
	cases := []struct {
		name      string
		src       string
		line, col int
		contains  string
	}{
		{"syntax", "{\n  \"ID\": \"v\",\n  \"Name\" \"x\"\n}", 3, 10, "invalid JSON"},
		{"truncated", "{\"ID\": \"v\"", 1, 11, "unexpected end"},
		{"not an object", "[1]", 1, 1, "a volume must be a JSON object"},
		{"wrong type", "{\n  \"ID\": \"v\",\n  \"RequestedCapacityMin\": \"10GiB\"\n}", 3, 33, "RequestedCapacityMin"},
		{"wrong nested type", "{\"Volumes\": [\n  {\"ID\": 7}\n]}", 2, 10, "ID"},
		{"volumes not a list", "{\"Volumes\": {}}", 0, 0, "Volumes must be a non-empty JSON array"},
		{"volumes null", "{\"Volumes\": null}", 0, 0, "Volumes must be a non-empty JSON array"},
		{"volumes empty", "{\"Volumes\": []}", 0, 0, "Volumes must be a non-empty JSON array"},
		{"null volume", "{\"Volumes\": [null]}", 0, 0, "Volumes[0] must be a JSON object"},
		{"two volumes for one", "{\"Volumes\": [{\"ID\": \"a\"}, {\"ID\": \"b\"}]}", 0, 0, "Volumes holds 2 volumes; expected exactly one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseVolumeJSON([]byte(tc.src))
			require.True(t, errors.Is(err, ErrParse), "%v", err)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, [2]int{tc.line, tc.col}, [2]int{pe.Line, pe.Column}, err.Error())
			require.Contains(t, err.Error(), tc.contains)
		})
	}
}

// TestVolumeJSONMatchesHCL checks that the HCL spec and Nomad's JSON for the
// same volume decode to the same message.
func TestVolumeJSONMatchesHCL(t *testing.T) {
	src := `id = "a"
name = "a-name"
type = "csi"
namespace = "prod"
external_id = "ext-a"
plugin_id = "hostpath"
snapshot_id = "snap-a"
capacity_min = "10GiB"
capacity_max = "20GiB"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
capability {
  access_mode     = "multi-node-reader-only"
  attachment_mode = "block-device"
}
mount_options {
  fs_type     = "xfs"
  mount_flags = ["noatime"]
}
secrets {
  token = "s3cret"
}
parameters {
  type = "gp3"
}
context {
  share = "/export"
}
topology_request {
  required {
    topology {
      segments {
        zone = "a"
      }
    }
  }
  preferred {
    topology {
      segments {
        rack = "r2"
      }
    }
  }
}
`
	fromHCL, err := ParseVolume("a.hcl", []byte(src))
	require.NoError(t, err)
	body, err := json.Marshal(nomadVolume("a"))
	require.NoError(t, err)
	fromJSON, err := ParseVolumeJSON(body)
	require.NoError(t, err)
	requireProto(t, fromHCL, fromJSON)
}
