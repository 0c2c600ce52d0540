package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func preemption(allocID, by string) *messages.AllocStopUpdate {
	return &messages.AllocStopUpdate{AllocID: allocID, DesiredStatus: messages.AllocDesiredStatusEvict,
		DesiredDescription: "Preempted by alloc ID " + by, PreemptedByAllocation: by}
}

func preemptEval(id, jobID string) *messages.Evaluation {
	e := testEval(id, jobID, messages.EvalStatusPending)
	e.TriggeredBy = EvalTriggerPreemption
	return e
}

// TestApplyPlanRechecksPreemptions: a placement that preempts fits only
// counting what its preemptions free; a preemption of an allocation that
// is gone, no longer running, already evicted or on another node is
// refused with its placement, which leaves the allocation as it was; an
// evaluation for the preempted job is kept only when one of its
// allocations was evicted.
func TestApplyPlanRechecksPreemptions(t *testing.T) {
	tests := []struct {
		name      string
		before    func(h *harness) // changes after the low job's alloc runs
		place     []*messages.Allocation
		preempt   []*messages.AllocStopUpdate
		placed    []string
		refused   []string
		evicted   bool // low1 ends evicted by p1
		wantEval  bool // the preemption eval for "low" is stored
		wantUsage int64
	}{
		{name: "fits counting what the preemption frees",
			place: []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 700, 100)}, preempt: []*messages.AllocStopUpdate{preemption("low1", "p1")},
			placed: []string{"p1"}, evicted: true, wantEval: true, wantUsage: 700},
		{name: "without the preemption it does not fit",
			place:   []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 700, 100)},
			refused: []string{"p1"}, wantUsage: 600},
		{name: "what it frees is not enough",
			place:   []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 700, 100), testAlloc("p2", "high", "n1", "e", 400, 100)},
			preempt: []*messages.AllocStopUpdate{preemption("low1", "p1"), preemption("low2", "p2")},
			placed:  []string{"p1"}, refused: []string{"p2"}, evicted: true, wantEval: true, wantUsage: 700},
		{name: "already stopped",
			before: func(h *harness) { h.apply(stopAllocCmd("low1")) },
			place:  []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 700, 100)}, preempt: []*messages.AllocStopUpdate{preemption("low1", "p1")},
			refused: []string{"p1"}, wantUsage: 0},
		{name: "completed on its client",
			before: func(h *harness) {
				h.apply(clientUpdate(&messages.Allocation{ID: "low1", ClientStatus: "complete"}))
			},
			place: []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 300, 100)}, preempt: []*messages.AllocStopUpdate{preemption("low1", "p1")},
			refused: []string{"p1"}, wantUsage: 0},
		{name: "already evicted by an earlier plan",
			before: func(h *harness) {
				h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("q1", "high", "n1", "e", 100, 10)},
					Preemptions: []*messages.AllocStopUpdate{preemption("low1", "q1")}}))
			},
			place: []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 700, 100)}, preempt: []*messages.AllocStopUpdate{preemption("low1", "p1")},
			refused: []string{"p1"}, wantUsage: 100},
		{name: "unknown allocation",
			place: []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 300, 100)}, preempt: []*messages.AllocStopUpdate{preemption("nope", "p1")},
			refused: []string{"p1"}, wantUsage: 600},
		{name: "on another node",
			place: []*messages.Allocation{testAlloc("p1", "high", "n2", "e", 300, 100)}, preempt: []*messages.AllocStopUpdate{preemption("low1", "p1")},
			refused: []string{"p1"}, wantUsage: 600},
		{name: "two placements, one victim",
			place:   []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 500, 100), testAlloc("p2", "high", "n1", "e", 500, 100)},
			preempt: []*messages.AllocStopUpdate{preemption("low1", "p1"), preemption("low1", "p2")},
			placed:  []string{"p1"}, refused: []string{"p2"}, evicted: true, wantEval: true, wantUsage: 500},
		{name: "a preemption for no placement is not applied",
			place: []*messages.Allocation{testAlloc("p1", "high", "n1", "e", 100, 10)}, preempt: []*messages.AllocStopUpdate{preemption("low1", "other")},
			placed: []string{"p1"}, wantUsage: 700},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerNode(testNode("n1", 1000, 1000)))
			h.apply(registerNode(testNode("n2", 1000, 1000)))
			h.apply(registerJob(testJob("low", 10, 10), testEval("le", "low", "complete")))
			h.apply(registerJob(testJob("high", 10, 10), testEval("e", "high", messages.EvalStatusPending)))
			h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("low1", "low", "n1", "le", 600, 100)}}))
			h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("low2", "low", "n2", "le", 600, 100)}}))
			if tt.before != nil {
				tt.before(h)
			}
			res := h.apply(plan(&messages.ApplyPlan{EvalID: "e", Place: tt.place, Preemptions: tt.preempt,
				NewEvals: []*messages.Evaluation{preemptEval("pe", "low")}})).(*messages.ApplyPlanResult)
			require.Equal(t, tt.placed, res.Placed)
			require.Equal(t, tt.refused, res.Refused)
			low := h.snap().AllocByID("low1")
			if tt.evicted {
				require.Equal(t, messages.AllocDesiredStatusEvict, low.DesiredStatus)
				require.Equal(t, "p1", low.PreemptedByAllocation)
				require.Equal(t, "Preempted by alloc ID p1", low.DesiredDescription)
			} else {
				require.NotEqual(t, "p1", low.PreemptedByAllocation)
			}
			require.Equal(t, tt.wantEval, h.snap().EvalByID("pe") != nil)
			cpu, _, _ := h.snap().NodeUsage("n1")
			require.Equal(t, tt.wantUsage, cpu)
		})
	}
}

// TestApplyPlanPreemptionFreesPorts: a port held by the allocation a
// placement preempts is free for it.
func TestApplyPlanPreemptionFreesPorts(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(testJob("low", 10, 10), testEval("le", "low", "complete")))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{withPort(testAlloc("low1", "low", "n1", "le", 100, 100), 8080)}}))
	res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{withPort(testAlloc("p0", "high", "n1", "e", 100, 100), 8080)}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"p0"}, res.Refused, "the port is held")
	res = h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{withPort(testAlloc("p1", "high", "n1", "e", 100, 100), 8080)},
		Preemptions: []*messages.AllocStopUpdate{preemption("low1", "p1")}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"p1"}, res.Placed)
	require.Equal(t, messages.AllocDesiredStatusEvict, h.snap().AllocByID("low1").DesiredStatus)
}
