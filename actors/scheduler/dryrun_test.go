package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// TestDryRunCountsPerGroup: a dry run of a new job, a scale up, a scale
// down, a new version and an unchanged job counts the plan as Nomad's
// job plan does, and never changes the snapshot.
func TestDryRunCountsPerGroup(t *testing.T) {
	running := testJob("web", jobTypeService, 3)
	snapWith := func() *MemSnapshot {
		snap := newMemSnapshot(testNodes(4), running)
		for i, n := range []string{"n00", "n01", "n02"} {
			snap.AddAlloc(testAlloc(running, n, uint32(i)))
		}
		return snap
	}
	edit := func(f func(j *messages.Job)) *messages.Job {
		j := proto.Clone(running).(*messages.Job)
		f(j)
		return j
	}
	tests := []struct {
		name string
		snap *MemSnapshot
		job  *messages.Job
		want DesiredUpdates
	}{
		{"new job", newMemSnapshot(testNodes(4)), running, DesiredUpdates{Place: 3}},
		{"unchanged", snapWith(), running, DesiredUpdates{Ignore: 3}},
		{"scale up", snapWith(), edit(func(j *messages.Job) { j.TaskGroups[0].Count = 5 }), DesiredUpdates{Place: 2, Ignore: 3}},
		{"scale down", snapWith(), edit(func(j *messages.Job) { j.TaskGroups[0].Count = 1 }), DesiredUpdates{Stop: 2, Ignore: 1}},
		{"new tasks", snapWith(), edit(func(j *messages.Job) { changeTasks(j, 1) }), DesiredUpdates{DestructiveUpdate: 3}},
		{"scale up of a new version", snapWith(), edit(func(j *messages.Job) { j.Version, j.TaskGroups[0].Count = 1, 4 }),
			DesiredUpdates{Place: 1, InPlaceUpdate: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(tt.snap.AllocsByJob("default", "web"))
			res, err := DryRun(tt.snap, tt.job, testEval(tt.job), testOpts(1))
			require.NoError(t, err)
			require.Equal(t, map[string]*DesiredUpdates{"web": &tt.want}, res.Updates)
			require.Empty(t, res.Failed)
			require.Len(t, tt.snap.AllocsByJob("default", "web"), before, "the snapshot is not changed")
			if tt.name == "new job" {
				require.Nil(t, tt.snap.JobByID("default", "web"))
			}
		})
	}
}

// TestDryRunReportsFailures: a group that fits nowhere is in Failed, with
// the exhausted dimension, as the evaluation would say.
func TestDryRunReportsFailures(t *testing.T) {
	job := testJob("big", jobTypeService, 2)
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 100000
	res, err := DryRun(newMemSnapshot(testNodes(3)), job, testEval(job), testOpts(1))
	require.NoError(t, err)
	require.Zero(t, res.Updates["web"].Place)
	require.Contains(t, res.Failed, "web")
	require.EqualValues(t, 3, res.Failed["web"].GetNodesEvaluated())
	require.Contains(t, res.Failed["web"].GetDimensionExhausted(), "memory")
	require.Len(t, res.Plan.GetNewEvals(), 1, "the blocked eval the real run would create")
}

// TestDryRunSeesCSIVolumes: a job whose volume does not exist plans as a
// failed placement, as the real run would, not as a success.
func TestDryRunSeesCSIVolumes(t *testing.T) {
	job := testJob("app", jobTypeService, 1)
	job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "csi", Source: "vol1",
		AccessMode: "single-node-writer", AttachmentMode: "file-system"}}
	snap := &csiSnap{MemSnapshot: newMemSnapshot(testNodes(2)), vols: map[string]*messages.CSIVolume{},
		plugins: map[string]*messages.CSIPlugin{}}
	res, err := DryRun(snap, job, testEval(job), testOpts(1))
	require.NoError(t, err)
	require.Zero(t, res.Updates["web"].Place)
	require.Contains(t, res.Failed, "web")
	require.Contains(t, res.Failed["web"].GetConstraintFiltered(), "missing CSI Volume vol1")
}
