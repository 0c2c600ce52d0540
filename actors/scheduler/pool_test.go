package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// pooledNodes: d0, d1 in "default", e0 naming no pool (so in "default"),
// g0, g1, g2 in "gpu".
func pooledNodes() []*messages.Node {
	var nodes []*messages.Node
	for _, n := range []struct{ id, pool string }{
		{"d0", "default"}, {"d1", "default"}, {"e0", ""}, {"g0", "gpu"}, {"g1", "gpu"}, {"g2", "gpu"},
	} {
		node := testNode(n.id, 4000, 8192)
		node.NodePool = n.pool
		nodes = append(nodes, node)
	}
	return nodes
}

// poolIndexed gives a MemSnapshot an index by pool (NodePoolSource), as
// the state store has.
type poolIndexed struct {
	*MemSnapshot
	byPool map[string][]*messages.Node
}

func indexPools(s *MemSnapshot) poolIndexed {
	ix := poolIndexed{MemSnapshot: s, byPool: map[string][]*messages.Node{}}
	for _, n := range s.Nodes() {
		p := jobPool(&messages.Job{NodePool: n.NodePool})
		ix.byPool[p] = append(ix.byPool[p], n)
	}
	return ix
}

func (s poolIndexed) NodesByPool(pool string) []*messages.Node { return s.byPool[pool] }

func placedNodes(plan *messages.ApplyPlan) []string {
	var out []string
	for _, a := range plan.Place {
		out = append(out, a.NodeID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestGenericJobsPlaceInTheirPool(t *testing.T) {
	tests := []struct {
		name      string
		pool      string
		count     int32
		wantNodes []string // the nodes used, when placed
		inPool    int32    // the failure metric's NodesInPool, when not
	}{
		{name: "no pool is default", pool: "", count: 6, wantNodes: []string{"d0", "d1", "e0"}},
		{name: "default", pool: "default", count: 6, wantNodes: []string{"d0", "d1", "e0"}},
		{name: "named", pool: "gpu", count: 6, wantNodes: []string{"g0", "g1", "g2"}},
		{name: "all", pool: "all", count: 12, wantNodes: []string{"d0", "d1", "e0", "g0", "g1", "g2"}},
		{name: "empty pool", pool: "empty", count: 2, inPool: 0},
	}
	for _, tt := range tests {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indexed=%v", tt.name, indexed), func(t *testing.T) {
				job := testJob("web", jobTypeService, tt.count)
				job.NodePool = tt.pool
				mem := newMemSnapshot(pooledNodes(), job)
				var snap Snapshot = mem
				if indexed {
					snap = indexPools(mem)
				}
				plan := mustProcess(t, snap, testEval(job), 1)
				if tt.wantNodes == nil {
					require.Empty(t, plan.Place)
					m := plan.EvalUpdate.FailedTGAllocs["web"]
					require.Equal(t, tt.pool, m.NodePool)
					require.Equal(t, tt.inPool, m.NodesInPool)
					require.Zero(t, m.NodesEvaluated, "other pools' nodes are not evaluated")
					require.Zero(t, m.NodesFiltered)
					require.Empty(t, m.ConstraintFiltered, "nor counted as filtered")
					require.Len(t, plan.NewEvals, 1, "blocked until a node joins the pool")
					require.Equal(t, messages.EvalStatusBlocked, plan.NewEvals[0].Status)
					require.Equal(t, tt.pool, plan.NewEvals[0].FailedTGAllocs["web"].NodePool)
					return
				}
				require.Len(t, plan.Place, int(tt.count))
				require.Equal(t, tt.wantNodes, placedNodes(plan))
				for _, a := range plan.Place {
					require.LessOrEqual(t, a.Metrics.NodesEvaluated, int32(len(tt.wantNodes)))
				}
				require.Empty(t, plan.EvalUpdate.FailedTGAllocs)
			})
		}
	}
}

func TestPoolIndexGivesTheSamePlan(t *testing.T) {
	job := testJob("web", jobTypeService, 5)
	job.NodePool = "gpu"
	nodes := append(pooledNodes(), testNodes(20)...)
	for i, n := range nodes[6:] {
		if i%2 == 0 {
			n.NodePool = "gpu"
		}
	}
	mem := newMemSnapshot(nodes, job)
	plain := processWith(t, mem, testEval(job), prefixedOpts(7, "same"))
	indexed := processWith(t, indexPools(mem), testEval(job), prefixedOpts(7, "same"))
	require.Equal(t, placedNames(plain), placedNames(indexed))
	for i := range plain.Place {
		require.Equal(t, plain.Place[i].NodeID, indexed.Place[i].NodeID)
	}
}

func TestFailedPlacementInPoolCountsOnlyItsNodes(t *testing.T) {
	job := linuxJob(1)
	job.NodePool = "gpu"
	nodes := pooledNodes()
	nodes[3].Attributes["kernel.name"] = "windows" // g0
	nodes[4].Status = messages.NodeStatusDown      // g1
	nodes[5].Attributes["kernel.name"] = "windows" // g2
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.Equal(t, "gpu", m.NodePool)
	require.Equal(t, int32(2), m.NodesInPool)
	require.Equal(t, int32(2), m.NodesEvaluated)
	require.Equal(t, int32(2), m.NodesFiltered)
	require.Equal(t, map[string]int32{filterNotReady: 1, "${attr.kernel.name} = linux": 2}, m.ConstraintFiltered)
}

func TestSystemJobsRunInTheirPool(t *testing.T) {
	tests := []struct {
		name      string
		pool      string
		existing  []string // nodes holding an alloc of the job
		wantPlace []string
		wantStop  []string // not needed: out of the pool
	}{
		{name: "default", pool: "", wantPlace: []string{"d0", "d1", "e0"}},
		{name: "named", pool: "gpu", wantPlace: []string{"g0", "g1", "g2"}},
		{name: "all", pool: "all", wantPlace: []string{"d0", "d1", "e0", "g0", "g1", "g2"}},
		{name: "moved to another pool", pool: "gpu", existing: []string{"d0", "g0"},
			wantPlace: []string{"g1", "g2"}, wantStop: []string{"a-d0-0"}},
		{name: "empty pool", pool: "empty", existing: []string{"d1"}, wantStop: []string{"a-d1-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob("sys", jobTypeSystem, 0)
			job.NodePool = tt.pool
			s := newMemSnapshot(pooledNodes(), job)
			for _, n := range tt.existing {
				s.AddAlloc(testAlloc(job, n, 0))
			}
			plan := mustProcess(t, s, testEval(job), 1)
			require.Equal(t, tt.wantPlace, placedNodes(plan))
			var stopped []string
			for _, st := range plan.Stop {
				require.Equal(t, descNotNeeded, st.DesiredDescription)
				require.Empty(t, st.ClientStatus, "not lost: the node is fine")
				stopped = append(stopped, st.AllocID)
			}
			require.Equal(t, tt.wantStop, stopped)
			require.Empty(t, plan.EvalUpdate.FailedTGAllocs, "nodes of other pools are not failures")
		})
	}
}

func TestSystemJobFailureCountsItsPool(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	job.NodePool = "gpu"
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 1 << 20 // fits nowhere
	plan := mustProcess(t, newMemSnapshot(pooledNodes(), job), testEval(job), 1)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.Equal(t, "gpu", m.NodePool)
	require.Equal(t, int32(3), m.NodesInPool)
	require.Equal(t, int32(3), m.NodesEvaluated, "the gpu nodes only")
	require.Equal(t, int32(2), m.CoalescedFailures)
}

// BenchmarkProcess10kNodesPools is BenchmarkProcess10kNodes with the
// nodes spread over 10 pools and the job in one of them (1000 nodes):
// filtered reads every node and compares its pool, indexed reads the
// pool's nodes only.
func BenchmarkProcess10kNodesPools(b *testing.B) {
	job := benchJob()
	job.NodePool = "p3"
	nodes := SimulatedNodes(benchNodes, 1)
	for i, n := range nodes {
		n.NodePool = "p" + strconv.Itoa(i%10)
	}
	mem := newMemSnapshot(nodes, job)
	for _, bc := range []struct {
		name string
		snap Snapshot
	}{{"filtered", mem}, {"indexed", indexPools(mem)}} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			opts := Options{Now: testNow, Rand: rand.New(rand.NewPCG(1, 2)),
				NewID: func() string { n++; return strconv.Itoa(n) }}
			b.ReportAllocs()
			for range b.N {
				plan, err := process(bc.snap, testEval(job), opts)
				if err != nil || len(plan.Place) != benchCount {
					b.Fatalf("placed %d: %v", len(plan.GetPlace()), err)
				}
			}
			b.ReportMetric(float64(benchCount*b.N)/b.Elapsed().Seconds(), "allocs/s")
		})
	}
}
