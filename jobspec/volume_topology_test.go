package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func topologies(segs ...map[string]string) []*messages.CSITopology {
	var out []*messages.CSITopology
	for _, s := range segs {
		out = append(out, &messages.CSITopology{Segments: s})
	}
	return out
}

// TestVolumeTopologyRequest: topology_request as Nomad writes it, in HCL
// (several topologies, each with several segments)
// and in Nomad's JSON, decodes to the same request; on register the
// required topologies become the volume's Topologies.
func TestVolumeTopologyRequest(t *testing.T) {
	const hclSrc = `id = "db"
name = "db"
type = "csi"
plugin_id = "ebs"
external_id = "vol-1"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
topology_request {
  required {
    topology {
      segments {
        rack = "R2"
      }
    }
    topology {
      segments {
        rack = "R1"
        zone = "us-east-1a"
      }
    }
  }
  preferred {
    topology {
      segments {
        rack = "R1"
        zone = "us-east-1a"
      }
    }
  }
}
`
	const jsonSrc = `{"Volumes": [{"ID": "db", "Name": "db", "PluginID": "ebs", "ExternalID": "vol-1",
  "RequestedCapabilities": [{"AccessMode": "single-node-writer", "AttachmentMode": "file-system"}],
  "RequestedTopologies": {
    "Required": [{"Segments": {"rack": "R2"}}, {"Segments": {"rack": "R1", "zone": "us-east-1a"}}],
    "Preferred": [{"Segments": {"rack": "R1", "zone": "us-east-1a"}}]}}]}`
	want := &messages.CSITopologyRequest{
		Required:  topologies(map[string]string{"rack": "R2"}, map[string]string{"rack": "R1", "zone": "us-east-1a"}),
		Preferred: topologies(map[string]string{"rack": "R1", "zone": "us-east-1a"}),
	}
	fromHCL, err := ParseVolume("db.hcl", []byte(hclSrc))
	require.NoError(t, err)
	fromJSON, err := ParseVolumeJSON([]byte(jsonSrc))
	require.NoError(t, err)
	for name, v := range map[string]*messages.CSIVolume{"hcl": fromHCL, "json": fromJSON} {
		t.Run(name, func(t *testing.T) {
			requireProto(t, want, v.GetRequestedTopologies())
			require.Empty(t, v.GetTopologies(), "parsing alone sets no accessible topology")
			CanonicalizeVolume(v)
			require.NoError(t, ValidateVolume(v, false))
			require.NoError(t, ValidateVolume(v, true))
			AdoptRequiredTopologies(v)
			requireProto(t, &messages.CSIVolume{Topologies: want.Required}, &messages.CSIVolume{Topologies: v.Topologies})
			requireProto(t, want, v.GetRequestedTopologies())
		})
	}
}

func TestAdoptRequiredTopologies(t *testing.T) {
	zoneA, zoneB := map[string]string{"zone": "a"}, map[string]string{"zone": "b"}
	cases := []struct {
		name string
		vol  *messages.CSIVolume
		want []*messages.CSITopology
	}{
		{"no request", &messages.CSIVolume{}, nil},
		{"only preferred", &messages.CSIVolume{RequestedTopologies: &messages.CSITopologyRequest{
			Preferred: topologies(zoneA)}}, nil},
		{"required", &messages.CSIVolume{RequestedTopologies: &messages.CSITopologyRequest{
			Required: topologies(zoneA, zoneB), Preferred: topologies(zoneB)}}, topologies(zoneA, zoneB)},
		{"explicit topologies win", &messages.CSIVolume{Topologies: topologies(zoneB),
			RequestedTopologies: &messages.CSITopologyRequest{Required: topologies(zoneA)}}, topologies(zoneB)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			AdoptRequiredTopologies(c.vol)
			AdoptRequiredTopologies(c.vol) // idempotent
			requireProto(t, &messages.CSIVolume{Topologies: c.want}, &messages.CSIVolume{Topologies: c.vol.Topologies})
		})
	}
	AdoptRequiredTopologies(nil)
	v := &messages.CSIVolume{RequestedTopologies: &messages.CSITopologyRequest{Required: topologies(map[string]string{"zone": "a"})}}
	AdoptRequiredTopologies(v)
	v.Topologies[0].Segments["zone"] = "z"
	require.Equal(t, "a", v.RequestedTopologies.Required[0].Segments["zone"], "the topologies are copies")
}

func TestValidateVolumeTopologies(t *testing.T) {
	v := &messages.CSIVolume{ID: "db", Name: "db", Namespace: "default", PluginID: "ebs", ExternalID: "x",
		RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}},
		Topologies:            []*messages.CSITopology{{Segments: map[string]string{"zone": "a"}}, {}}}
	err := ValidateVolume(v, false)
	require.Error(t, err)
	require.Contains(t, err.Error(), "topologies: topology[1]: segments must not be empty")
}

// TestVolumeTopologyNomadForms: the one-line forms of Nomad's
// documentation (HCL 1: several segments with commas, quoted keys, keys
// that are no identifiers) parse, and so does segments as an object; bad
// segments are errors that name their line.
func TestVolumeTopologyNomadForms(t *testing.T) {
	const head = "id = \"db\"\nname = \"db\"\ntype = \"csi\"\nplugin_id = \"ebs\"\n"
	cases := []struct {
		name string
		body string
		want []*messages.CSITopology
		err  string // "" = parses
	}{
		{"nomad's documentation", `topology_request {
  required {
    topology { segments { rack = "R2" } }
    topology { segments { "rack" = "R1", "zone" = "us-east-1a"} }
  }
}`, topologies(map[string]string{"rack": "R2"}, map[string]string{"rack": "R1", "zone": "us-east-1a"}), ""},
		{"key that is no identifier", `topology_request {
  required {
    topology { segments { "topology.ebs.csi.aws.com/zone" = "us-east-1a" } }
  }
}`, topologies(map[string]string{"topology.ebs.csi.aws.com/zone": "us-east-1a"}), ""},
		{"segments as an object", `topology_request {
  required {
    topology {
      segments = { zone = "a" }
    }
  }
}`, topologies(map[string]string{"zone": "a"}), ""},
		{"a segment that is no string", `topology_request {
  required {
    topology { segments { zone = ["a"] } }
  }
}`, nil, "db.hcl:7:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := ParseVolume("db.hcl", []byte(head+c.body+"\n"))
			if c.err != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			requireProto(t, &messages.CSITopologyRequest{Required: c.want}, v.GetRequestedTopologies())
		})
	}
	require.Equal(t, "segments = {", string(segmentsAsAttributes([]byte("segments {"), "x.hcl")))
	require.Equal(t, "x = segments {", string(segmentsAsAttributes([]byte("x = segments {"), "x.hcl")), "only a body item")
}
