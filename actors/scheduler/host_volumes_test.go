package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// hostVolJob is a service job whose group mounts the host volume source.
func hostVolJob(id, source string, readOnly bool, count int32) *messages.Job {
	job := testJob(id, jobTypeService, count)
	tg := job.TaskGroups[0]
	tg.Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "host", Source: source, ReadOnly: readOnly}}
	tg.Tasks[0].VolumeMounts = []*messages.VolumeMount{{Volume: "data", Destination: "/data"}}
	return job
}

// hostVolNodes: n00 has no host volume, n01 has "shared" read-only, n02
// has "shared" writable.
func hostVolNodes() []*messages.Node {
	nodes := testNodes(3)
	nodes[1].HostVolumes = map[string]*messages.ClientHostVolume{"shared": {Path: "/srv/ro", ReadOnly: true}}
	nodes[2].HostVolumes = map[string]*messages.ClientHostVolume{"shared": {Path: "/srv/rw"}}
	return nodes
}

func TestHostVolumePlacedOnlyWhereItIs(t *testing.T) {
	for seed := range uint64(8) {
		job := hostVolJob("ro", "shared", true, 1)
		plan := mustProcess(t, newMemSnapshot(hostVolNodes(), job), testEval(job), seed)
		require.Len(t, plan.Place, 1)
		require.Contains(t, []string{"n01", "n02"}, plan.Place[0].NodeID, "seed %d", seed)

		job = hostVolJob("rw", "shared", false, 1)
		plan = mustProcess(t, newMemSnapshot(hostVolNodes(), job), testEval(job), seed)
		require.Len(t, plan.Place, 1)
		require.Equal(t, "n02", plan.Place[0].NodeID, "seed %d: a writer goes where the volume is writable", seed)
	}
}

func TestHostVolumeReadWriteOnReadOnlyIsRefused(t *testing.T) {
	nodes := hostVolNodes()[:2] // no volume; read-only
	job := hostVolJob("rw", "shared", false, 2)
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Empty(t, plan.Place)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.NotNil(t, m)
	require.Equal(t, map[string]int32{FilterHostVolumes: 2}, m.ConstraintFiltered)
	require.Equal(t, int32(2), m.NodesFiltered)
	require.Equal(t, int32(2), plan.EvalUpdate.QueuedAllocations["web"])
}

func TestHostVolumeMissingSourceIsRefused(t *testing.T) {
	job := hostVolJob("other", "other", true, 1)
	plan := mustProcess(t, newMemSnapshot(hostVolNodes(), job), testEval(job), 1)
	require.Empty(t, plan.Place)
	require.Equal(t, map[string]int32{FilterHostVolumes: 3},
		plan.EvalUpdate.FailedTGAllocs["web"].ConstraintFiltered)
}

func TestHostVolumeSystemJobSkipsNodesWithout(t *testing.T) {
	job := hostVolJob("sys", "shared", false, 0)
	job.Type = jobTypeSystem
	plan := mustProcess(t, newMemSnapshot(hostVolNodes(), job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	require.Equal(t, "n02", plan.Place[0].NodeID)
}

// TestNodeCacheTellsHostVolumesApart: a NodeCache shared by a job without
// volumes, one reading and one writing the same host volume keeps one set
// of results per job, and each plan is the plan made without the cache,
// also after a node gains the volume.
func TestNodeCacheTellsHostVolumesApart(t *testing.T) {
	plain := testJob("plain", jobTypeService, 3)
	ro, rw := hostVolJob("ro", "shared", true, 2), hostVolJob("rw", "shared", false, 1)
	s := newMemSnapshot(hostVolNodes(), plain, ro, rw)
	cache := newNodeCache()
	run := func(round int) []*messages.ApplyPlan {
		var plans []*messages.ApplyPlan
		for i, job := range []*messages.Job{plain, ro, rw} {
			opts := prefixedOpts(uint64(round*10+i), fmt.Sprint("h", round, i))
			want := processWith(t, s, testEval(job), opts)
			opts = prefixedOpts(uint64(round*10+i), fmt.Sprint("h", round, i))
			opts.NodeCache = cache
			got := processWith(t, s, testEval(job), opts)
			require.True(t, proto.Equal(want, got), "round %d job %s: the cache changed the plan", round, job.ID)
			plans = append(plans, got)
		}
		return plans
	}
	plans := run(0)
	require.Len(t, cache.pools[nodePoolDefault].feas, 3, "one set of static checks per job")
	require.Len(t, plans[2].Place, 1)
	require.Equal(t, "n02", plans[2].Place[0].NodeID)

	// n00 gains a writable "shared" (a new node object, as a registration makes).
	c := proto.Clone(s.Nodes()[0]).(*messages.Node)
	c.HostVolumes = map[string]*messages.ClientHostVolume{"shared": {Path: "/srv/new"}}
	s.AddNode(c)
	rw.TaskGroups[0].Count = 2
	plans = run(1)
	var got []string
	for _, a := range plans[2].Place {
		got = append(got, a.NodeID)
	}
	require.ElementsMatch(t, []string{"n00", "n02"}, got, "both writable nodes take a writer")
}
