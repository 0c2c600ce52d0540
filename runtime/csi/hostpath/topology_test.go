package hostpath

import (
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
)

func topo(kv ...string) *csipb.Topology {
	segs := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		segs[kv[i]] = kv[i+1]
	}
	return &csipb.Topology{Segments: segs}
}

// TestCreateVolumeTopology: a plugin with a topology reports
// VOLUME_ACCESSIBILITY_CONSTRAINTS and its node's topology, and each
// created volume is accessible from the first preferred topology, else
// the first requisite one, else the plugin's own; a re-create answers
// the stored one. A plugin without a topology gives volumes none.
func TestCreateVolumeTopology(t *testing.T) {
	cases := []struct {
		name   string
		plugin map[string]string
		req    *csipb.TopologyRequirement
		want   []*csipb.Topology
	}{
		{"no requirements: the plugin's own", map[string]string{"zone": "a"}, nil, []*csipb.Topology{topo("zone", "a")}},
		{"requisite", map[string]string{"zone": "a"},
			&csipb.TopologyRequirement{Requisite: []*csipb.Topology{topo("zone", "b"), topo("zone", "c")}},
			[]*csipb.Topology{topo("zone", "b")}},
		{"preferred before requisite", map[string]string{"zone": "a"},
			&csipb.TopologyRequirement{Requisite: []*csipb.Topology{topo("zone", "b"), topo("zone", "c")},
				Preferred: []*csipb.Topology{topo("zone", "c")}},
			[]*csipb.Topology{topo("zone", "c")}},
		{"no plugin topology", nil,
			&csipb.TopologyRequirement{Requisite: []*csipb.Topology{topo("zone", "b")}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, Config{Topology: tc.plugin})
			info, err := e.node.NodeGetInfo(e.ctx, &csipb.NodeGetInfoRequest{})
			require.NoError(t, err)
			caps, err := e.id.GetPluginCapabilities(e.ctx, &csipb.GetPluginCapabilitiesRequest{})
			require.NoError(t, err)
			accessibility := false
			for _, c := range caps.GetCapabilities() {
				accessibility = accessibility || c.GetService().GetType() == csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS
			}
			require.Equal(t, len(tc.plugin) > 0, accessibility)
			if tc.plugin != nil {
				require.Equal(t, tc.plugin, info.GetAccessibleTopology().GetSegments())
			} else {
				require.Nil(t, info.GetAccessibleTopology())
			}

			req := &csipb.CreateVolumeRequest{Name: "v1", VolumeCapabilities: []*csipb.VolumeCapability{rw},
				AccessibilityRequirements: tc.req}
			resp, err := e.ctrl.CreateVolume(e.ctx, req)
			require.NoError(t, err)
			requireTopologies(t, tc.want, resp.GetVolume().GetAccessibleTopology())
			again, err := e.ctrl.CreateVolume(e.ctx, &csipb.CreateVolumeRequest{Name: "v1",
				VolumeCapabilities: []*csipb.VolumeCapability{rw}})
			require.NoError(t, err)
			requireTopologies(t, tc.want, again.GetVolume().GetAccessibleTopology())
		})
	}
}

func requireTopologies(t *testing.T, want, got []*csipb.Topology) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].GetSegments(), got[i].GetSegments())
	}
}
