package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func segs(kv ...string) *messages.CSITopology {
	t := &messages.CSITopology{Segments: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Segments[kv[i]] = kv[i+1]
	}
	return t
}

// TestCSITopologyFeasibility: a group that claims a volume is placed only
// on a node whose node plugin's topology holds every segment of one of
// the volume's topologies; the others are filtered as "did not meet
// topology requirement", and when none is left the failed placement
// says so.
func TestCSITopologyFeasibility(t *testing.T) {
	// Node plugins: n1 in zone a (rack r1), n2 in zone b, n3 reports none.
	plugin := &messages.CSIPlugin{ID: "hostpath", Nodes: map[string]*messages.CSIInfo{
		"n1": {PluginID: "hostpath", Healthy: true, NodeInfo: &messages.CSINodeInfo{ID: "n1",
			AccessibleTopology: segs("zone", "a", "rack", "r1")}},
		"n2": {PluginID: "hostpath", Healthy: true, NodeInfo: &messages.CSINodeInfo{ID: "n2",
			AccessibleTopology: segs("zone", "b")}},
		"n3": {PluginID: "hostpath", Healthy: true, NodeInfo: &messages.CSINodeInfo{ID: "n3"}},
	}}
	cases := []struct {
		name      string
		vol       []*messages.CSITopology
		count     int32
		wantNodes []string // the nodes placements may land on
		filtered  int      // nodes filtered for topology
	}{
		{"no topology: accessible everywhere", nil, 3, []string{"n1", "n2", "n3"}, 0},
		{"matching zone", []*messages.CSITopology{segs("zone", "a")}, 1, []string{"n1"}, 2},
		{"every segment must match", []*messages.CSITopology{segs("zone", "a", "rack", "r1")}, 1, []string{"n1"}, 2},
		{"one differing segment", []*messages.CSITopology{segs("zone", "a", "rack", "r2")}, 1, nil, 3},
		{"a key the node lacks", []*messages.CSITopology{segs("region", "eu")}, 1, nil, 3},
		{"one of several topologies", []*messages.CSITopology{segs("zone", "c"), segs("zone", "b")}, 1, []string{"n2"}, 2},
		{"no topology matches", []*messages.CSITopology{segs("zone", "c")}, 1, nil, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := testJob("app", jobTypeService, c.count)
			job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "csi", Source: "vol1",
				AccessMode: "multi-node-multi-writer", AttachmentMode: "file-system"}}
			nodes := []*messages.Node{testNode("n1", 4000, 8192), testNode("n2", 4000, 8192), testNode("n3", 4000, 8192)}
			snap := &csiSnap{MemSnapshot: newMemSnapshot(nodes, job),
				vols: map[string]*messages.CSIVolume{"vol1": {ID: "vol1", PluginID: "hostpath", Schedulable: true,
					Topologies: c.vol}},
				plugins: map[string]*messages.CSIPlugin{"hostpath": plugin}}
			plan := processWith(t, snap, &messages.Evaluation{ID: "e1", JobID: "app", Namespace: job.Namespace,
				Type: jobTypeService, Status: messages.EvalStatusPending}, testOpts(1))
			if c.wantNodes == nil {
				require.Empty(t, plan.Place)
				m := plan.EvalUpdate.FailedTGAllocs[job.TaskGroups[0].Name]
				require.NotNil(t, m)
				require.Equal(t, int32(c.filtered), m.ConstraintFiltered[FilterCSITopology], "filters: %v", m.ConstraintFiltered)
				require.Equal(t, int32(3), m.NodesFiltered)
				return
			}
			require.Len(t, plan.Place, int(c.count))
			for _, a := range plan.Place {
				require.Contains(t, c.wantNodes, a.NodeID)
				require.Equal(t, int32(c.filtered), a.GetMetrics().GetNodesFiltered())
			}
			require.Empty(t, plan.EvalUpdate.GetFailedTGAllocs())
		})
	}
}

func TestTopologyMatches(t *testing.T) {
	cases := []struct {
		name string
		node *messages.CSITopology
		vol  []*messages.CSITopology
		want bool
	}{
		{"volume without topologies", nil, nil, true},
		{"node without topology", nil, []*messages.CSITopology{segs("zone", "a")}, false},
		{"subset", segs("zone", "a", "rack", "r1"), []*messages.CSITopology{segs("zone", "a")}, true},
		{"superset", segs("zone", "a"), []*messages.CSITopology{segs("zone", "a", "rack", "r1")}, false},
		{"value differs", segs("zone", "a"), []*messages.CSITopology{segs("zone", "b")}, false},
		{"second topology", segs("zone", "b"), []*messages.CSITopology{segs("zone", "a"), segs("zone", "b")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, topologyMatches(c.node, c.vol)) })
	}
}
