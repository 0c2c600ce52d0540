package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/messages"
)

// TestClusterCSITopology runs the hostpath CSI plugin on 3 clients, each
// in its own zone (-topology zone=<its node ID>), and two volumes
// accessible from one zone only: one made by `volume create` with a
// required topology (the controller instance that creates it is in
// another zone), one registered with a required topology. Read through
// Nomad's own Go client, the node plugins show their AccessibleTopology
// and the volumes their Topologies. A job that claims both volumes lands
// on the node of that zone, the two others filtered for topology; with
// that node ineligible a new job is not placed, and its evaluation says
// "did not meet topology requirement".
func TestClusterCSITopology(t *testing.T) {
	cc := startCSICluster(t, 1, 3)
	cc.runZonedPlugin(t)
	zoneA := cc.order[len(cc.order)-1] // not the lowest: the controller instance runs elsewhere
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: cc.server().HTTPAddr()})
	require.NoError(t, err)

	plugin, _, err := nc.CSIPlugins().Info("hostpath", nil)
	require.NoError(t, err)
	for _, id := range cc.order {
		require.Equal(t, map[string]string{"zone": id}, plugin.Nodes[id].NodeInfo.AccessibleTopology.Segments,
			"node plugin on %s", short(id))
	}

	inA := []*messages.CSITopology{{Segments: map[string]string{"zone": zoneA}}}
	created, _, err := cc.server().API.Volumes().Create(&messages.CSIVolume{ID: "topo-c", Name: "topo-c", PluginID: "hostpath",
		RequestedCapabilities: []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}},
		RequestedTopologies:   &messages.CSITopologyRequest{Required: inA}}, nil)
	require.NoError(t, err)
	require.Len(t, created, 1)
	require.NoError(t, os.MkdirAll(filepath.Join(cc.root, "hand-made"), 0o777))
	_, err = nc.CSIVolumes().Register(&nomadapi.CSIVolume{ID: "topo-r", Name: "topo-r", PluginID: "hostpath", ExternalID: "hand-made",
		RequestedCapabilities: []*nomadapi.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}},
		RequestedTopologies: &nomadapi.CSITopologyRequest{
			Required: []*nomadapi.CSITopology{{Segments: map[string]string{"zone": zoneA}}}}}, nil)
	require.NoError(t, err)
	for _, id := range []string{"topo-c", "topo-r"} {
		v, _, err := nc.CSIVolumes().Info(id, nil)
		require.NoError(t, err)
		require.Len(t, v.Topologies, 1, id)
		require.Equal(t, map[string]string{"zone": zoneA}, v.Topologies[0].Segments, "%s is accessible from zone A only", id)
		require.NotNil(t, v.RequestedTopologies, id)
		require.Equal(t, map[string]string{"zone": zoneA}, v.RequestedTopologies.Required[0].Segments, id)
	}

	cc.register(t, topologyJobHCL("topo", "topo-c", "topo-r"))
	allocs := cc.waitRunning(t, "topo", 1, settleTimeout, nil)
	require.Equal(t, zoneA, allocs[0].NodeID, "placed in the volumes' zone")
	al, _, err := cc.server().API.Allocations().Info(allocs[0].ID, nil)
	require.NoError(t, err)
	require.Equal(t, int32(len(cc.order)-1), al.GetMetrics().GetNodesFiltered(), "the other zones' nodes were filtered")
	_, _, err = cc.server().API.Jobs().Deregister("topo", false, nil)
	require.NoError(t, err)
	cc.waitFreed(t, settleTimeout, "the claims to be freed", []string{"topo-c", "topo-r"}, nil)

	_, err = cc.server().API.Nodes().ToggleEligibility(zoneA, false, nil)
	require.NoError(t, err)
	cc.register(t, topologyJobHCL("topo2", "topo-c", "topo-r"))
	var failed *messages.AllocMetric
	cc.eventually(t, settleTimeout, "a failed placement of topo2", func() (bool, string) {
		evals, _, err := cc.server().API.Jobs().Evaluations("topo2", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if m := e.GetFailedTGAllocs()["g"]; m != nil {
				failed = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d evaluations, none failed", len(evals))
	})
	require.Equal(t, int32(len(cc.order)-1), failed.GetConstraintFiltered()[scheduler.FilterCSITopology],
		"filters: %v", failed.GetConstraintFiltered())
	nomadEvals, _, err := nc.Jobs().Evaluations("topo2", nil)
	require.NoError(t, err)
	var reported int
	for _, e := range nomadEvals {
		if m := e.FailedTGAllocs["g"]; m != nil {
			reported = max(reported, m.ConstraintFiltered["did not meet topology requirement"])
		}
	}
	require.Equal(t, len(cc.order)-1, reported, "Nomad's client reads the reason")
	allocs2, err := cc.jobAllocs("topo2")
	require.NoError(t, err)
	require.Empty(t, allocs2, "no node in the zone is eligible")
}

// runZonedPlugin runs the hostpath plugin as a system job whose instance
// on each client reports the topology zone=<node ID>, and waits until
// every client has a healthy node instance that shows it.
func (cc *csiCluster) runZonedPlugin(t *testing.T) {
	t.Helper()
	cc.registerPlugin(t, " -topology zone=$NOMAD_ALLOC_NODE_ID")
	cc.eventually(t, settleTimeout, "a healthy, zoned hostpath instance on every client", func() (bool, string) {
		p, _, err := cc.server().API.Plugins().Info("hostpath", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, id := range cc.order {
			n := p.GetNodes()[id]
			if !n.GetHealthy() || !p.GetControllers()[id].GetHealthy() || n.GetNodeInfo().GetAccessibleTopology().GetSegments()["zone"] != id {
				return false, fmt.Sprintf("node %s: %v", short(id), n)
			}
		}
		return true, ""
	})
}

// topologyJobHCL is a job of one allocation that mounts the given volumes.
func topologyJobHCL(id string, sources ...string) string {
	var vols, mounts string
	for i, src := range sources {
		vols += fmt.Sprintf(`    volume "v%d" {
      type            = "csi"
      source          = %q
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
`, i, src)
		mounts += fmt.Sprintf("      volume_mount {\n        volume      = \"v%d\"\n        destination = \"/v%d\"\n      }\n", i, i)
	}
	return fmt.Sprintf(`job %q {
  datacenters = ["dc1"]
  group "g" {
%s    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 0.5; done"]
      }
%s      kill_timeout = "2s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id, vols, mounts)
}
