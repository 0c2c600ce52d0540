package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// withCores gives a test allocation's task the reserved cores.
func withCores(a *messages.Allocation, cores ...uint32) *messages.Allocation {
	a.AllocatedResources.Tasks["app"].Cpu.ReservedCores = cores
	return a
}

// TestApplyPlanRefusesDoubleBookedCores: the FSM refuses a placement that
// reserves a core another live allocation on the node holds (committed
// before or placed earlier in the same plan), a core the node cannot
// reserve, or one core twice; a stopped holder frees its cores, and an
// in-place update keeps its own.
func TestApplyPlanRefusesDoubleBookedCores(t *testing.T) {
	n1 := testNode("n1", 10000, 10000)
	n1.NodeResources.Cpu.TotalCpuCores = 4
	n1.NodeResources.Cpu.ReservableCpuCores = []uint32{1, 2, 3} // core 0 is the client's
	tests := []struct {
		name        string
		place       []*messages.Allocation
		stop        []*messages.AllocStopUpdate
		wantPlaced  []string
		wantRefused []string
	}{
		{"free core", []*messages.Allocation{withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 2)}, nil, []string{"p1"}, nil},
		{"core held", []*messages.Allocation{withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 2, 1)}, nil, nil, []string{"p1"}},
		{"core not reservable", []*messages.Allocation{withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 0)}, nil, nil, []string{"p1"}},
		{"core unknown", []*messages.Allocation{withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 7)}, nil, nil, []string{"p1"}},
		{"one core twice", []*messages.Allocation{withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 3, 3)}, nil, nil, []string{"p1"}},
		{"same plan twice", []*messages.Allocation{
			withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 2),
			withCores(testAlloc("p2", "web", "n1", "e", 1, 1), 2),
			withCores(testAlloc("p3", "web", "n1", "e", 1, 1), 3),
		}, nil, []string{"p1", "p3"}, []string{"p2"}},
		{"stopped holder frees", []*messages.Allocation{withCores(testAlloc("p1", "web", "n1", "e", 1, 1), 1)},
			[]*messages.AllocStopUpdate{{AllocID: "old"}}, []string{"p1"}, nil},
		{"in-place update keeps its own", []*messages.Allocation{withCores(testAlloc("old", "web", "n1", "e", 1, 1), 1)},
			nil, []string{"old"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerNode(cloneTestNode(n1)))
			h.apply(registerJob(testJob("web", 10, 10), testEval("e", "web", messages.EvalStatusPending)))
			res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
				withCores(testAlloc("old", "web", "n1", "e", 1, 1), 1)}})).(*messages.ApplyPlanResult)
			require.Equal(t, []string{"old"}, res.Placed)
			res = h.apply(plan(&messages.ApplyPlan{EvalID: "e", Place: tt.place, Stop: tt.stop})).(*messages.ApplyPlanResult)
			require.Equal(t, tt.wantPlaced, res.Placed)
			require.Equal(t, tt.wantRefused, res.Refused)
			for _, id := range tt.wantRefused {
				require.Nil(t, h.snap().AllocByID(id))
			}
		})
	}
}

// TestNodeReservedCoresFollowsAllocs: the node's reserved cores are kept
// from the allocations' writes: a placement adds its cores, a stop takes
// them away, and each write names the node in the usage log.
func TestNodeReservedCoresFollowsAllocs(t *testing.T) {
	h := newHarness(t)
	n1 := testNode("n1", 10000, 10000)
	n1.NodeResources.Cpu.TotalCpuCores = 4
	h.apply(registerNode(n1))
	h.apply(registerJob(testJob("web", 10, 10), testEval("e", "web", messages.EvalStatusPending)))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
		withCores(testAlloc("a", "web", "n1", "e", 1, 1), 3, 1), withCores(testAlloc("b", "web", "n1", "e", 1, 1), 2),
		testAlloc("c", "web", "n1", "e", 1, 1)}}))
	require.Equal(t, []uint32{1, 2, 3}, h.snap().NodeReservedCores("n1"))
	epoch, gen := h.snap().UsageVersion()

	h.apply(plan(&messages.ApplyPlan{Stop: []*messages.AllocStopUpdate{{AllocID: "a"}}}))
	s := h.snap()
	require.Equal(t, []uint32{2}, s.NodeReservedCores("n1"))
	var changed []string
	require.True(t, s.UsageChangedSince(epoch, gen, func(id string) { changed = append(changed, id) }))
	require.Equal(t, []string{"n1"}, changed)
	require.Nil(t, s.NodeReservedCores("n2"))
}
