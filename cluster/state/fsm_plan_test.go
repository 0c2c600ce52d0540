package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestApplyPlanChecksNodes(t *testing.T) {
	down := testNode("down", 1000, 1000)
	down.Status = "down"
	inelig := testNode("inelig", 1000, 1000)
	inelig.SchedulingEligibility = messages.NodeSchedulingIneligible
	reserved := testNode("reserved", 1000, 1000)
	reserved.ReservedResources = &messages.NodeReservedResources{Cpu: &messages.NodeCpuResources{CpuShares: 600}}
	tests := []struct {
		name        string
		place       []*messages.Allocation
		stop        []*messages.AllocStopUpdate
		wantPlaced  []string
		wantRefused []string
	}{
		{"fits", []*messages.Allocation{testAlloc("p1", "web", "n1", "e", 200, 200)}, nil, []string{"p1"}, nil},
		{"exactly full fits", []*messages.Allocation{testAlloc("p1", "web", "n1", "e", 500, 500)}, nil, []string{"p1"}, nil},
		{"node full refuses", []*messages.Allocation{testAlloc("p1", "web", "n1", "e", 501, 10)}, nil, nil, []string{"p1"}},
		{"memory full refuses", []*messages.Allocation{testAlloc("p1", "web", "n1", "e", 10, 501)}, nil, nil, []string{"p1"}},
		{"second of two refused", []*messages.Allocation{
			testAlloc("p1", "web", "n1", "e", 300, 300), testAlloc("p2", "web", "n1", "e", 300, 300),
		}, nil, []string{"p1"}, []string{"p2"}},
		{"stop in same plan frees capacity", []*messages.Allocation{testAlloc("p1", "web", "n1", "e", 900, 900)},
			[]*messages.AllocStopUpdate{{AllocID: "old"}}, []string{"p1"}, nil},
		{"unknown node refused", []*messages.Allocation{testAlloc("p1", "web", "nope", "e", 1, 1)}, nil, nil, []string{"p1"}},
		{"down node refused", []*messages.Allocation{testAlloc("p1", "web", "down", "e", 1, 1)}, nil, nil, []string{"p1"}},
		{"ineligible node refused", []*messages.Allocation{testAlloc("p1", "web", "inelig", "e", 1, 1)}, nil, nil, []string{"p1"}},
		{"reserved counts", []*messages.Allocation{testAlloc("p1", "web", "reserved", "e", 401, 1)}, nil, nil, []string{"p1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			for _, n := range []*messages.Node{testNode("n1", 1000, 1000), down, inelig, reserved} {
				h.apply(registerNode(cloneTestNode(n)))
			}
			h.apply(registerJob(testJob("web", 10, 10), testEval("e", "web", messages.EvalStatusPending)))
			h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("old", "web", "n1", "e", 500, 500)}}))
			res := h.apply(plan(&messages.ApplyPlan{EvalID: "e", Place: tt.place, Stop: tt.stop})).(*messages.ApplyPlanResult)
			require.Equal(t, tt.wantPlaced, res.Placed)
			require.Equal(t, tt.wantRefused, res.Refused)
			require.Equal(t, h.index, res.Index)
			for _, id := range tt.wantRefused {
				require.Nil(t, h.snap().AllocByID(id))
			}
			for _, id := range tt.wantPlaced {
				require.NotNil(t, h.snap().AllocByID(id))
			}
			cpu, _, _ := h.snap().NodeUsage("n1")
			var want int64 = 500
			if tt.stop != nil {
				want = 0
			}
			for _, a := range tt.place {
				if a.NodeID == "n1" && h.snap().AllocByID(a.ID) != nil {
					c, _, _ := AllocResources(a)
					want += c
				}
			}
			require.Equal(t, want, cpu)
		})
	}
}

func TestApplyPlanStoresAllocs(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerJob(testJob("web", 100, 64), testEval("e1", "web", messages.EvalStatusPending)))
	job := h.snap().JobByID("default", "web")
	a := testAlloc("a1", "web", "n1", "e1", 0, 0)
	a.AllocatedResources = nil // derived from the job's group
	a.Job = job
	next := testEval("e-next", "web", messages.EvalStatusPending)
	next.WaitUntil = testNow + 60e9
	res := h.apply(&messages.Command{Time: testNow + 3, Cmd: plan(&messages.ApplyPlan{
		EvalID:     "e1",
		Place:      []*messages.Allocation{a},
		EvalUpdate: testEval("e1", "web", "complete"),
		NewEvals:   []*messages.Evaluation{next, testEval("e-now", "web", messages.EvalStatusPending)},
	}).Cmd}).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1"}, res.Placed)

	got := h.snap().AllocByID("a1")
	require.Nil(t, got.Job, "the job is not stored per alloc")
	require.Equal(t, job.Version, got.JobVersion)
	require.Equal(t, uint64(3), got.CreateIndex)
	require.Equal(t, uint64(3), got.ModifyIndex)
	require.Equal(t, uint64(3), got.AllocModifyIndex)
	require.Equal(t, testNow+3, got.CreateTime)
	require.Equal(t, messages.AllocDesiredStatusRun, got.DesiredStatus)
	require.Equal(t, messages.AllocClientStatusPending, got.ClientStatus)
	cpu, mem, disk := h.snap().NodeUsage("n1")
	require.Equal(t, []int64{100, 64, 0, 1}, []int64{cpu, mem, disk, h.snap().liveAllocs("n1")})

	e1 := h.snap().EvalByID("e1")
	require.Equal(t, "complete", e1.Status)
	require.Equal(t, uint64(2), e1.CreateIndex)

	ev := h.lastEvent()
	require.Equal(t, uint64(3), ev.Index)
	require.Equal(t, []string{"n1"}, ev.NodesChanged)
	require.Equal(t, []string{"e-now"}, ev.EvalsReady)
	require.Len(t, ev.DelayedEvals, 1)
	require.Equal(t, "e-next", ev.DelayedEvals[0].ID)
}

func TestApplyPlanStopUpdates(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(registerNode(testNode("n2", 1000, 1000)))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
		testAlloc("a1", "web", "n1", "e1", 100, 100), testAlloc("a2", "web", "n2", "e1", 100, 100),
	}}))
	h.apply(plan(&messages.ApplyPlan{Stop: []*messages.AllocStopUpdate{
		{AllocID: "a1", DesiredDescription: "node down", ClientStatus: "lost"},
		{AllocID: "a2", DesiredStatus: "evict", DesiredDescription: "preempted"},
		{AllocID: "unknown"},
	}}))
	a1, a2 := h.snap().AllocByID("a1"), h.snap().AllocByID("a2")
	require.Equal(t, []string{messages.AllocDesiredStatusStop, "node down", "lost"}, []string{a1.DesiredStatus, a1.DesiredDescription, a1.ClientStatus})
	require.Equal(t, []string{"evict", "preempted", messages.AllocClientStatusPending}, []string{a2.DesiredStatus, a2.DesiredDescription, a2.ClientStatus})
	require.Equal(t, uint64(4), a1.AllocModifyIndex)
	require.Equal(t, uint64(3), a1.CreateIndex)
	require.Equal(t, []string{"n1", "n2"}, h.lastEvent().NodesChanged)
	cpu, _, _ := h.snap().NodeUsage("n1")
	n := h.snap().liveAllocs("n1")
	require.Zero(t, cpu)
	require.Zero(t, n)
}

func TestApplyPlanInPlaceUpdate(t *testing.T) {
	h := newHarness(t)
	h.apply(registerNode(testNode("n1", 1000, 1000)))
	h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e1", 600, 600)}}))
	h.apply(clientUpdate(&messages.Allocation{ID: "a1", ClientStatus: "running", ClientDescription: "ok"}))
	// 600 + 700 > 1000, but a1 replaces itself: only 700 counts.
	res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e2", 700, 700)}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1"}, res.Placed)
	a := h.snap().AllocByID("a1")
	require.Equal(t, "running", a.ClientStatus, "client side kept")
	require.Equal(t, uint64(2), a.CreateIndex)
	require.Equal(t, "e2", a.EvalID)
	require.Empty(t, h.snap().AllocsByEval("e1"))
	require.Len(t, h.snap().AllocsByEval("e2"), 1)
	cpu, _, _ := h.snap().NodeUsage("n1")
	require.Equal(t, []int64{700, 1}, []int64{cpu, h.snap().liveAllocs("n1")})
}

func TestApplyPlanChecksDiskOnlyWhenAsked(t *testing.T) {
	h := newHarness(t)
	n := testNode("n1", 1000, 1000)
	n.NodeResources.Disk = &messages.NodeDiskResources{DiskMB: 100}
	h.apply(registerNode(n))
	withDisk := func(id string, disk int64) *messages.Allocation {
		a := testAlloc(id, "web", "n1", "e", 1, 1)
		a.AllocatedResources.Shared = &messages.AllocatedSharedResources{DiskMB: disk}
		return a
	}
	res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
		withDisk("a1", 80), withDisk("a2", 30), withDisk("a3", 0), withDisk("a4", 20),
	}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1", "a3", "a4"}, res.Placed)
	require.Equal(t, []string{"a2"}, res.Refused)
	_, _, disk := h.snap().NodeUsage("n1")
	require.Equal(t, int64(100), disk)
}
