package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// TestNewVersionInPlaceOrReplaced: a job's new version updates its
// running allocations in place (same IDs, nodes and resources, the new
// version, no stop) when only the count, the reschedule or migrate policy
// or the priority changed, and replaces them when anything the tasks see
// changed.
func TestNewVersionInPlaceOrReplaced(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(j *messages.Job)
		inPlace bool
	}{
		{"count", func(j *messages.Job) { j.TaskGroups[0].Count = 4 }, true},
		{"reschedule policy", func(j *messages.Job) {
			j.TaskGroups[0].ReschedulePolicy = &messages.ReschedulePolicy{Attempts: 9}
		}, true},
		{"migrate", func(j *messages.Job) { j.TaskGroups[0].Migrate = &messages.MigrateStrategy{MaxParallel: 2} }, true},
		{"priority", func(j *messages.Job) { j.Priority = 90 }, true},
		{"task env", func(j *messages.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "1"} }, false},
		{"task resources", func(j *messages.Job) { j.TaskGroups[0].Tasks[0].Resources.CPU = 600 }, false},
		{"group meta", func(j *messages.Job) { j.TaskGroups[0].Meta = map[string]string{"a": "b"} }, false},
		{"job meta", func(j *messages.Job) { j.Meta = map[string]string{"a": "b"} }, false},
		{"restart policy", func(j *messages.Job) {
			j.TaskGroups[0].RestartPolicy = &messages.RestartPolicy{Attempts: 1}
		}, false},
		{"datacenters", func(j *messages.Job) { j.Datacenters = []string{"dc1", "dc2"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, 3)
			snap := newMemSnapshot(testNodes(4), job)
			running := map[string]*messages.Allocation{}
			for i, n := range []string{"n00", "n01", "n02"} {
				a := testAlloc(job, n, uint32(i))
				snap.AddAlloc(a)
				running[a.ID] = a
			}
			v1 := proto.Clone(job).(*messages.Job)
			v1.Version = 1
			tt.edit(v1)
			snap.AddJob(v1)
			plan := mustProcess(t, snap, testEval(v1), 1)
			updated := 0
			for _, a := range plan.Place {
				if old := running[a.ID]; old != nil {
					updated++
					require.Equal(t, old.NodeID, a.NodeID)
					require.True(t, proto.Equal(old.AllocatedResources, a.AllocatedResources))
					require.EqualValues(t, 1, a.JobVersion)
					require.Same(t, v1, a.Job)
				}
			}
			if tt.inPlace {
				require.Equal(t, 3, updated, "every running alloc updated in place")
				require.Empty(t, plan.Stop, "none replaced")
				require.Len(t, plan.Place, int(v1.TaskGroups[0].Count))
			} else {
				require.Zero(t, updated)
				require.Len(t, plan.Stop, 3)
				for _, s := range plan.Stop {
					require.Equal(t, descUpdating, s.DesiredDescription)
				}
			}
		})
	}
}

// TestWithoutJobVersionsEveryNewVersionReplaces: a snapshot that cannot
// give a job's earlier versions gets destructive updates only.
func TestWithoutJobVersionsEveryNewVersionReplaces(t *testing.T) {
	job := testJob("web", jobTypeService, 2)
	snap := newMemSnapshot(testNodes(2), job)
	snap.AddAlloc(testAlloc(job, "n00", 0))
	snap.AddAlloc(testAlloc(job, "n01", 1))
	v1 := proto.Clone(job).(*messages.Job)
	v1.Version, v1.TaskGroups[0].Count = 1, 3
	snap.AddJob(v1)
	plan := mustProcess(t, struct{ Snapshot }{snap}, testEval(v1), 1)
	require.Len(t, plan.Stop, 2)
	require.Len(t, plan.Place, 3)
}

// TestSystemJobScaleFreeChangeUpdatesInPlace: a system job's new version
// that its tasks do not see updates each node's allocation in place.
func TestSystemJobScaleFreeChangeUpdatesInPlace(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	s := newMemSnapshot(testNodes(2), job)
	s.AddAlloc(testAlloc(job, "n00", 0))
	s.AddAlloc(testAlloc(job, "n01", 0))
	v1 := proto.Clone(job).(*messages.Job)
	v1.Version, v1.Priority = 1, 80
	s.AddJob(v1)
	plan := mustProcess(t, s, testEval(v1), 1)
	require.Empty(t, plan.Stop)
	require.ElementsMatch(t, []string{"a-n00-0", "a-n01-0"}, []string{plan.Place[0].ID, plan.Place[1].ID})
	for _, a := range plan.Place {
		require.EqualValues(t, 1, a.JobVersion)
	}
}

// countVersions counts JobVersion lookups.
type countVersions struct {
	*MemSnapshot
	calls map[uint64]int
}

func (c countVersions) JobVersion(namespace, id string, version uint64) *messages.Job {
	c.calls[version]++
	return c.MemSnapshot.JobVersion(namespace, id, version)
}

// TestInPlaceDecidedOncePerVersion: allocations of two older versions are
// each judged against their own version (v0 changed its tasks since, v1
// only its count), and each version is looked up once, not per alloc.
func TestInPlaceDecidedOncePerVersion(t *testing.T) {
	v0 := testJob("web", jobTypeService, 4)
	snap := newMemSnapshot(testNodes(4), v0)
	v1 := proto.Clone(v0).(*messages.Job)
	changeTasks(v1, 1)
	snap.AddJob(v1)
	v2 := proto.Clone(v1).(*messages.Job)
	v2.Version, v2.TaskGroups[0].Count = 2, 5
	snap.AddJob(v2)
	for i, n := range []string{"n00", "n01", "n02", "n03"} {
		a := testAlloc(v0, n, uint32(i))
		if i >= 2 {
			a.JobVersion = 1
		}
		snap.AddAlloc(a)
	}
	src := countVersions{snap, map[uint64]int{}}
	plan := mustProcess(t, src, testEval(v2), 1)
	stops := stopsByID(plan)
	require.Len(t, stops, 2)
	for _, id := range []string{"a-n00-0", "a-n01-1"} {
		require.Equal(t, descUpdating, stops[id].GetDesiredDescription(), "v0 alloc %s replaced", id)
	}
	inPlace := 0
	for _, a := range plan.Place {
		if a.ID == "a-n02-2" || a.ID == "a-n03-3" {
			inPlace++
		}
	}
	require.Equal(t, 2, inPlace, "v1 allocs updated in place")
	require.Equal(t, map[uint64]int{0: 1, 1: 1}, src.calls)
}
