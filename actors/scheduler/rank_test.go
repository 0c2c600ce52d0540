package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// otherJobAlloc uses cpu/mem on node for a different job.
func otherJobAlloc(node string, cpu, mem int64) *messages.Allocation {
	other := testJob("other", jobTypeService, 1)
	other.TaskGroups[0].Tasks[0].Resources = &messages.Resources{CPU: int32(cpu), MemoryMB: int32(mem)}
	a := testAlloc(other, node, 0)
	a.ID = "other-" + node
	return a
}

func TestBinPackPrefersTheFullerNodeThatFits(t *testing.T) {
	for _, snap := range []struct {
		name string
		wrap func(*MemSnapshot) Snapshot
	}{
		{"usage totals", func(s *MemSnapshot) Snapshot { return s }},
		{"summed allocs", func(s *MemSnapshot) Snapshot { return hideUsage{s} }},
	} {
		t.Run(snap.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, 1)
			s := newMemSnapshot([]*messages.Node{testNode("empty", 4000, 8192), testNode("busy", 4000, 8192)}, job)
			s.AddAlloc(otherJobAlloc("busy", 3000, 6000))
			plan := mustProcess(t, snap.wrap(s), testEval(job), 1)
			require.Equal(t, "busy", plan.Place[0].NodeID)

			job.TaskGroups[0].Tasks[0].Resources = &messages.Resources{CPU: 1500, MemoryMB: 3000}
			plan = mustProcess(t, snap.wrap(s), testEval(job), 1)
			require.Equal(t, "empty", plan.Place[0].NodeID, "busy has no room left")
		})
	}
}

func TestBinPackScore(t *testing.T) {
	u := &nodeUsage{cap: resources{cpu: 1000, mem: 1000}}
	require.InDelta(t, 0.0, binPackScore(u, resources{}), 1e-9)
	require.InDelta(t, 1.0, binPackScore(u, resources{cpu: 1000, mem: 1000}), 1e-9)
	half := binPackScore(u, resources{cpu: 500, mem: 500})
	require.InDelta(t, (20-2*3.1622776601683795)/18, half, 1e-9)
}

func TestAntiAffinitySpreadsEqualNodes(t *testing.T) {
	job := testJob("web", jobTypeService, 2)
	plan := mustProcess(t, newMemSnapshot(testNodes(2), job), testEval(job), 1)
	require.Len(t, plan.Place, 2)
	require.NotEqual(t, plan.Place[0].NodeID, plan.Place[1].NodeID)
}

func TestPlacementFailureBlocksOnMemory(t *testing.T) {
	job := testJob("web", jobTypeService, 3)
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 16000
	plan := mustProcess(t, newMemSnapshot(testNodes(4), job), testEval(job), 1)
	require.Empty(t, plan.Place)
	upd := plan.EvalUpdate
	require.Equal(t, messages.EvalStatusComplete, upd.Status)
	require.Equal(t, int32(3), upd.QueuedAllocations["web"])
	m := upd.FailedTGAllocs["web"]
	require.Equal(t, map[string]int32{dimMemory: 4}, m.DimensionExhausted)
	require.Equal(t, int32(4), m.NodesExhausted)
	require.Equal(t, int32(4), m.NodesEvaluated)
	require.Equal(t, int32(2), m.CoalescedFailures)
	require.Len(t, plan.NewEvals, 1)
	b := plan.NewEvals[0]
	require.Equal(t, messages.EvalStatusBlocked, b.Status)
	require.Equal(t, triggerQueued, b.TriggeredBy)
	require.Equal(t, "eval-1", b.PreviousEval)
	require.Equal(t, b.ID, upd.BlockedEval)
	require.True(t, proto.Equal(m, b.FailedTGAllocs["web"]))
}

func TestPartialPlacementQueuesTheRest(t *testing.T) {
	job := testJob("web", jobTypeService, 3)
	job.TaskGroups[0].Tasks[0].Resources = &messages.Resources{CPU: 3000, MemoryMB: 1000}
	plan := mustProcess(t, newMemSnapshot(testNodes(2), job), testEval(job), 1)
	require.Len(t, plan.Place, 2)
	require.Equal(t, int32(1), plan.EvalUpdate.QueuedAllocations["web"])
	require.Equal(t, map[string]int32{dimCPU: 2}, plan.EvalUpdate.FailedTGAllocs["web"].DimensionExhausted)
}

func TestBlockedEvalIsReblocked(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 16000
	eval := testEval(job)
	eval.Status = messages.EvalStatusBlocked
	plan := mustProcess(t, newMemSnapshot(testNodes(2), job), eval, 1)
	require.Equal(t, messages.EvalStatusBlocked, plan.EvalUpdate.Status)
	require.Empty(t, plan.NewEvals)
}

func TestDistinctHosts(t *testing.T) {
	cases := []struct {
		name     string
		onJob    bool
		count    int32
		placed   int
		filtered int32
	}{
		{"group fits", false, 3, 3, 0},
		{"group one too many", false, 4, 3, 3},
		{"job one too many", true, 4, 3, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, tc.count)
			c := []*messages.Constraint{{Operand: opDistinctHosts, RTarget: "true"}}
			if tc.onJob {
				job.Constraints = c
			} else {
				job.TaskGroups[0].Constraints = c
			}
			plan := mustProcess(t, newMemSnapshot(testNodes(3), job), testEval(job), 1)
			require.Len(t, plan.Place, tc.placed)
			seen := map[string]bool{}
			for _, a := range plan.Place {
				require.False(t, seen[a.NodeID], "two allocs on %s", a.NodeID)
				seen[a.NodeID] = true
			}
			if tc.filtered > 0 {
				require.Equal(t, tc.filtered,
					plan.EvalUpdate.FailedTGAllocs["web"].ConstraintFiltered[filterDistinctHosts])
			}
		})
	}
}

func TestDistinctHostsCountsExistingAllocs(t *testing.T) {
	job := testJob("web", jobTypeService, 2)
	job.TaskGroups[0].Constraints = []*messages.Constraint{{Operand: opDistinctHosts}}
	s := newMemSnapshot(testNodes(2), job)
	s.AddAlloc(testAlloc(job, "n00", 0))
	plan := mustProcess(t, s, testEval(job), 1)
	require.Equal(t, []string{"web.web[1]"}, placedNames(plan))
	require.Equal(t, "n01", plan.Place[0].NodeID)
}

func TestDistinctProperty(t *testing.T) {
	job := testJob("web", jobTypeService, 3)
	job.TaskGroups[0].Constraints = []*messages.Constraint{{LTarget: "${meta.rack}", Operand: opDistinctProperty}}
	nodes := testNodes(4)
	for i, n := range nodes {
		n.Meta["rack"] = fmt.Sprintf("r%d", i/2)
	}
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Len(t, plan.Place, 2)
	rackOf := map[string]string{}
	for _, n := range nodes {
		rackOf[n.ID] = n.Meta["rack"]
	}
	require.NotEqual(t, rackOf[plan.Place[0].NodeID], rackOf[plan.Place[1].NodeID])
	require.Contains(t, plan.EvalUpdate.FailedTGAllocs["web"].ConstraintFiltered, "distinct_property: ${meta.rack}")

	job.TaskGroups[0].Constraints[0].RTarget = "2"
	plan = mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Len(t, plan.Place, 3)
}

func TestLimitEvaluatesLogNNodes(t *testing.T) {
	job := testJob("web", jobTypeService, 100)
	plan := mustProcess(t, newMemSnapshot(SimulatedNodes(10000, 1), job), testEval(job), 1)
	require.Len(t, plan.Place, 100)
	require.Equal(t, 14, logLimit(10000))
	for _, a := range plan.Place {
		require.Equal(t, int32(14), a.Metrics.NodesEvaluated)
		require.Equal(t, int32(0), a.Metrics.NodesFiltered)
	}
	require.Equal(t, 2, logLimit(1))
	require.Equal(t, 2, logLimit(3))
	require.Equal(t, 10, logLimit(1000))
}

func TestProcessIsDeterministic(t *testing.T) {
	job := testJob("web", jobTypeService, 50)
	s := newMemSnapshot(SimulatedNodes(1000, 3), job)
	a := processWith(t, s, testEval(job), prefixedOpts(42, "x"))
	b := processWith(t, s, testEval(job), prefixedOpts(42, "x"))
	require.True(t, proto.Equal(a, b))
	c := processWith(t, s, testEval(job), prefixedOpts(43, "x"))
	require.False(t, proto.Equal(a, c), "another seed visits nodes in another order")
}

func TestProcessValidatesInput(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	s := newMemSnapshot(testNodes(1), job)
	cases := []struct {
		name string
		snap Snapshot
		eval *messages.Evaluation
		opts func(*Options)
		want error
	}{
		{"nil snapshot", nil, testEval(job), func(*Options) {}, errNilSnapshot},
		{"nil eval", s, nil, func(*Options) {}, errNilEval},
		{"no ids", s, testEval(job), func(o *Options) { o.NewID = nil }, errMissingNewID},
		{"no rand", s, testEval(job), func(o *Options) { o.Rand = nil }, errMissingRand},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testOpts(1)
			tc.opts(&o)
			_, err := process(tc.snap, tc.eval, o)
			require.ErrorIs(t, err, tc.want)
		})
	}
	job.Type = "cron"
	_, err := process(s, testEval(job), testOpts(1))
	require.ErrorIs(t, err, errUnknownJobType)
}
