package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestClientUpdateMergesClientFieldsOnly(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(testJob("web", 10, 10), nil))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 100, 100)}}))
	before := h.snap().AllocByID("a1")

	upd := &messages.Allocation{
		ID: "a1", ClientStatus: "running", ClientDescription: "tasks running",
		TaskStates:    map[string]*messages.TaskState{"app": {State: "running"}},
		NetworkStatus: &messages.NetworkStatus{Address: "10.0.0.2"},
		ModifyTime:    testNow + 99,
		// Server-owned fields a client must not change:
		NodeID: "n9", DesiredStatus: "stop", JobID: "other", EvalID: "e9",
	}
	failed := testEval("e-fail", "web", messages.EvalStatusPending)
	res := h.apply(&messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: &messages.UpdateAllocsFromClient{
		Allocs: []*messages.Allocation{upd, {ID: "unknown", ClientStatus: "running"}},
		Evals:  []*messages.Evaluation{failed},
	}}})
	require.Nil(t, res)

	a := h.snap().AllocByID("a1")
	require.Equal(t, "running", a.ClientStatus)
	require.Equal(t, "tasks running", a.ClientDescription)
	require.Equal(t, "running", a.TaskStates["app"].State)
	require.Equal(t, "10.0.0.2", a.NetworkStatus.Address)
	require.Equal(t, testNow+99, a.ModifyTime)
	require.Equal(t, uint64(4), a.ModifyIndex)
	require.Equal(t, before.AllocModifyIndex, a.AllocModifyIndex, "not a desired-side change")
	require.Equal(t, []string{"n1", messages.AllocDesiredStatusRun, "web", "e1"}, []string{a.NodeID, a.DesiredStatus, a.JobID, a.EvalID})
	require.Nil(t, h.snap().AllocByID("unknown"))
	require.Equal(t, messages.AllocClientStatusPending, before.ClientStatus, "stored object not mutated")

	ev := h.lastEvent()
	require.Equal(t, []string{"e-fail"}, ev.EvalsReady)
	require.Empty(t, ev.NodesChanged)
	require.Equal(t, messages.JobStatusRunning, h.snap().JobByID("default", "web").Status)
}

func TestClientUpdateFreesCapacityWhenTerminal(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 800, 800)}}))
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "failed"}))
	cpu, _, _ := h.snap().NodeUsage("n1")
	n := h.snap().liveAllocs("n1")
	require.Zero(t, cpu)
	require.Zero(t, n)
	res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a2", "web", "n1", "e2", 800, 800)}}))
	require.Equal(t, []string{"a2"}, res.(*messages.ApplyPlanResult).Placed)
}

func TestStopAlloc(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(testJob("web", 10, 10), nil))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 100, 100)}}))
	stop := func(id string) *messages.Command {
		return &messages.Command{Cmd: &messages.Command_StopAlloc{StopAlloc: &messages.StopAlloc{
			AllocID: id, DesiredDescription: "stopped by operator", Eval: testEval("e2", "web", messages.EvalStatusPending),
		}}}
	}
	require.Nil(t, h.apply(stop("a1")))
	a := h.snap().AllocByID("a1")
	require.Equal(t, messages.AllocDesiredStatusStop, a.DesiredStatus)
	require.Equal(t, "stopped by operator", a.DesiredDescription)
	ev := h.lastEvent()
	require.Equal(t, []string{"n1"}, ev.NodesChanged)
	require.Equal(t, []string{"e2"}, ev.EvalsReady)

	err, ok := h.apply(stop("nope")).(error)
	require.True(t, ok)
	require.ErrorIs(t, err, ErrAllocNotFound)
}

func TestRegisterNode(t *testing.T) {
	h := newHarness(t)
	n := testNode("n1", 1000, 1000)
	n.Status = "initializing"
	h.apply(&messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{
		Node: n, Eval: testEval("e-node", "", messages.EvalStatusPending),
	}}})
	got := h.snap().NodeByID("n1")
	require.Equal(t, messages.NodeSchedulingEligible, got.SchedulingEligibility)
	require.Equal(t, testNow/1e9, got.StatusUpdatedAt)
	require.Equal(t, uint64(1), got.CreateIndex)
	require.Equal(t, []string{"n1"}, h.lastEvent().NodeUpdated)
	require.NotNil(t, h.snap().EvalByID("e-node"))

	h.apply(&messages.Command{Cmd: &messages.Command_UpdateNodeEligibility{UpdateNodeEligibility: &messages.UpdateNodeEligibility{
		NodeID: "n1", Eligibility: messages.NodeSchedulingIneligible,
	}}})
	drained := cloneTestNode(h.snap().NodeByID("n1"))
	drained.Drain = true
	drained.ModifyIndex = 0
	h.apply(registerNode(drained))

	again := testNode("n1", 2000, 1000) // a client re-registers: no drain, no eligibility
	again.Status = messages.NodeStatusReady
	h.apply(registerNode(again))
	got = h.snap().NodeByID("n1")
	require.Equal(t, messages.NodeSchedulingIneligible, got.SchedulingEligibility, "operator's eligibility kept")
	require.True(t, got.Drain, "drain kept")
	require.Equal(t, int64(2000), got.NodeResources.Cpu.CpuShares)
	require.Equal(t, messages.NodeStatusReady, got.Status)
	require.Equal(t, uint64(1), got.CreateIndex)
	require.Equal(t, uint64(4), got.ModifyIndex)
}

func TestNodeStatusAndEligibility(t *testing.T) {
	tests := []struct {
		name  string
		cmd   func(id string) *messages.Command
		check func(t *testing.T, n *messages.Node)
	}{
		{"status", func(id string) *messages.Command {
			return &messages.Command{Time: testNow + 5e9, Cmd: &messages.Command_UpdateNodeStatus{UpdateNodeStatus: &messages.UpdateNodeStatus{
				NodeID: id, Status: "down", StatusDescription: "missed heartbeats",
				Evals: []*messages.Evaluation{testEval("e1", "web", messages.EvalStatusPending)},
			}}}
		}, func(t *testing.T, n *messages.Node) {
			require.Equal(t, "down", n.Status)
			require.Equal(t, "missed heartbeats", n.StatusDescription)
			require.Equal(t, testNow/1e9+5, n.StatusUpdatedAt)
		}},
		{"eligibility", func(id string) *messages.Command {
			return &messages.Command{Cmd: &messages.Command_UpdateNodeEligibility{UpdateNodeEligibility: &messages.UpdateNodeEligibility{
				NodeID: id, Eligibility: messages.NodeSchedulingIneligible, Evals: []*messages.Evaluation{testEval("e1", "web", messages.EvalStatusPending)},
			}}}
		}, func(t *testing.T, n *messages.Node) {
			require.Equal(t, messages.NodeSchedulingIneligible, n.SchedulingEligibility)
			require.Equal(t, messages.NodeStatusReady, n.Status)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerNode(testNode("n1", 1000, 1000)))
			require.Nil(t, h.apply(tt.cmd("n1")))
			n := h.snap().NodeByID("n1")
			tt.check(t, n)
			require.Equal(t, uint64(2), n.ModifyIndex)
			require.Equal(t, []string{"n1"}, h.lastEvent().NodeUpdated)
			require.Equal(t, []string{"e1"}, h.lastEvent().EvalsReady)

			err, ok := h.apply(tt.cmd("nope")).(error)
			require.True(t, ok)
			require.ErrorIs(t, err, ErrNodeNotFound)
		})
	}
}
