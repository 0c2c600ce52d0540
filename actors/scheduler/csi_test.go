package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// csiSnap is a MemSnapshot that also knows CSI volumes and plugins.
type csiSnap struct {
	*MemSnapshot
	vols    map[string]*messages.CSIVolume
	plugins map[string]*messages.CSIPlugin
}

func (s *csiSnap) CSIVolumeByID(_, id string) *messages.CSIVolume { return s.vols[id] }
func (s *csiSnap) CSIPluginByID(id string) *messages.CSIPlugin    { return s.plugins[id] }

func TestCSIFeasibility(t *testing.T) {
	healthyOn := func(nodes ...string) *messages.CSIPlugin {
		p := &messages.CSIPlugin{ID: "hostpath", Nodes: map[string]*messages.CSIInfo{}}
		for _, n := range nodes {
			p.Nodes[n] = &messages.CSIInfo{PluginID: "hostpath", Healthy: true}
		}
		p.Nodes["sick"] = &messages.CSIInfo{PluginID: "hostpath", Healthy: false}
		return p
	}
	vol := func(schedulable bool, claims ...*messages.CSIVolumeClaim) *messages.CSIVolume {
		return &messages.CSIVolume{ID: "vol1", PluginID: "hostpath", Schedulable: schedulable, Claims: claims}
	}
	cases := []struct {
		name     string
		vol      *messages.CSIVolume
		plugin   *messages.CSIPlugin
		readOnly bool
		wantNode string // "" = placement fails
		reason   string
	}{
		{"placed on the node with a healthy plugin", vol(true), healthyOn("n2"), false, "n2", ""},
		{"no healthy node plugin", vol(true), healthyOn(), false, "", "CSI plugin hostpath is missing from client or unhealthy"},
		{"missing volume", nil, healthyOn("n1"), false, "", "missing CSI Volume vol1"},
		{"unschedulable volume", vol(false), healthyOn("n1"), false, "", "CSI volume vol1 is unschedulable"},
		{"writer taken", vol(true, &messages.CSIVolumeClaim{AllocationID: "other", Mode: "write", State: "taken"}), healthyOn("n1"), false, "",
			"CSI volume vol1 has exhausted its available writer claims"},
		{"a reader may join a taken writer", vol(true, &messages.CSIVolumeClaim{AllocationID: "other", Mode: "write", State: "taken"}), healthyOn("n1"), true, "n1", ""},
		{"a freed writer claim does not count", vol(true, &messages.CSIVolumeClaim{AllocationID: "other", Mode: "write", State: "freed"}), healthyOn("n1"), false, "n1", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := testJob("app", jobTypeService, 1)
			job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "csi", Source: "vol1",
				AccessMode: "single-node-writer", AttachmentMode: "file-system", ReadOnly: c.readOnly}}
			nodes := []*messages.Node{testNode("n1", 4000, 8192), testNode("n2", 4000, 8192), testNode("sick", 4000, 8192)}
			snap := &csiSnap{MemSnapshot: newMemSnapshot(nodes, job), vols: map[string]*messages.CSIVolume{},
				plugins: map[string]*messages.CSIPlugin{"hostpath": c.plugin}}
			if c.vol != nil {
				snap.vols["vol1"] = c.vol
			}
			plan := processWith(t, snap, &messages.Evaluation{ID: "e1", JobID: "app", Namespace: job.Namespace, Type: jobTypeService, Status: messages.EvalStatusPending}, testOpts(1))
			if c.wantNode != "" {
				require.Len(t, plan.Place, 1)
				require.Equal(t, c.wantNode, plan.Place[0].NodeID)
				return
			}
			require.Empty(t, plan.Place)
			m := plan.EvalUpdate.FailedTGAllocs[job.TaskGroups[0].Name]
			require.NotNil(t, m)
			require.Positive(t, m.ConstraintFiltered[c.reason], "filters: %v", m.ConstraintFiltered)
		})
	}
}

// TestCSIPerAllocVolumes: with per_alloc, allocation N uses volume
// source[N]; each placement goes where its own volume's plugin is, and a
// missing volume for one index fails only that placement.
func TestCSIPerAllocVolumes(t *testing.T) {
	job := testJob("app", jobTypeService, 3)
	job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "csi", Source: "vol",
		AccessMode: "single-node-writer", AttachmentMode: "file-system", PerAlloc: true}}
	nodes := []*messages.Node{testNode("n1", 4000, 8192), testNode("n2", 4000, 8192)}
	plugin := func(id, node string) *messages.CSIPlugin {
		return &messages.CSIPlugin{ID: id, Nodes: map[string]*messages.CSIInfo{node: {PluginID: id, Healthy: true}}}
	}
	snap := &csiSnap{MemSnapshot: newMemSnapshot(nodes, job),
		vols: map[string]*messages.CSIVolume{
			"vol[0]": {ID: "vol[0]", PluginID: "on-n1", Schedulable: true},
			"vol[1]": {ID: "vol[1]", PluginID: "on-n2", Schedulable: true},
		},
		plugins: map[string]*messages.CSIPlugin{"on-n1": plugin("on-n1", "n1"), "on-n2": plugin("on-n2", "n2")}}
	plan := processWith(t, snap, &messages.Evaluation{ID: "e1", JobID: "app", Namespace: job.Namespace, Type: jobTypeService, Status: messages.EvalStatusPending}, testOpts(1))
	byIndex := map[uint32]string{}
	for _, a := range plan.Place {
		byIndex[a.Index] = a.NodeID
	}
	require.Equal(t, map[uint32]string{0: "n1", 1: "n2"}, byIndex)
	m := plan.EvalUpdate.FailedTGAllocs[job.TaskGroups[0].Name]
	require.NotNil(t, m, "vol[2] does not exist")
	require.Positive(t, m.ConstraintFiltered["missing CSI Volume vol[2]"], "filters: %v", m.ConstraintFiltered)
	require.Equal(t, "vol[7]", PerAllocSource("vol", 7))
}
