package state

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// withPort gives a test allocation a bridge network holding host port p.
func withPort(a *messages.Allocation, p int32) *messages.Allocation {
	a.AllocatedResources.Shared = &messages.AllocatedSharedResources{Networks: []*messages.NetworkResource{{
		Mode: "bridge", DynamicPorts: []*messages.Port{{Label: "http", Value: p, To: 8080}}}}}
	return a
}

// withGPUs gives a test allocation's task device instances ids.
func withGPUs(a *messages.Allocation, ids ...string) *messages.Allocation {
	a.AllocatedResources.Tasks["app"].Devices = []*messages.AllocatedDeviceResource{
		{Vendor: "nvidia", Type: "gpu", Name: "H100", DeviceIDs: ids}}
	return a
}

// TestApplyPlanRechecksPortsAndDevices: the FSM refuses a placement whose
// host port or device instance another live allocation on the node holds
// (one committed before, or placed earlier in the same plan), or whose
// device is not a healthy instance of the node; a stopped holder frees
// them, and an in-place update keeps its own.
func TestApplyPlanRechecksPortsAndDevices(t *testing.T) {
	n1 := testNode("n1", 10000, 10000)
	n1.NodeResources.Devices = []*messages.NodeDeviceResource{{Vendor: "nvidia", Type: "gpu", Name: "H100",
		Instances: []*messages.NodeDevice{{ID: "GPU-0", Healthy: true}, {ID: "GPU-1", Healthy: true}, {ID: "GPU-2", Healthy: false}}}}
	tests := []struct {
		name        string
		place       []*messages.Allocation
		stop        []*messages.AllocStopUpdate
		wantPlaced  []string
		wantRefused []string
	}{
		{"free port and device", []*messages.Allocation{withGPUs(withPort(testAlloc("p1", "web", "n1", "e", 1, 1), 20001), "GPU-1")},
			nil, []string{"p1"}, nil},
		{"port held", []*messages.Allocation{withPort(testAlloc("p1", "web", "n1", "e", 1, 1), 20000)},
			nil, nil, []string{"p1"}},
		{"device held", []*messages.Allocation{withGPUs(testAlloc("p1", "web", "n1", "e", 1, 1), "GPU-0")},
			nil, nil, []string{"p1"}},
		{"unhealthy device", []*messages.Allocation{withGPUs(testAlloc("p1", "web", "n1", "e", 1, 1), "GPU-2")},
			nil, nil, []string{"p1"}},
		{"unknown device", []*messages.Allocation{withGPUs(testAlloc("p1", "web", "n1", "e", 1, 1), "GPU-9")},
			nil, nil, []string{"p1"}},
		{"same plan twice", []*messages.Allocation{
			withGPUs(withPort(testAlloc("p1", "web", "n1", "e", 1, 1), 20001), "GPU-1"),
			withPort(testAlloc("p2", "web", "n1", "e", 1, 1), 20001),
			withGPUs(testAlloc("p3", "web", "n1", "e", 1, 1), "GPU-1"),
		}, nil, []string{"p1"}, []string{"p2", "p3"}},
		{"stopped holder frees", []*messages.Allocation{withGPUs(withPort(testAlloc("p1", "web", "n1", "e", 1, 1), 20000), "GPU-0")},
			[]*messages.AllocStopUpdate{{AllocID: "old"}}, []string{"p1"}, nil},
		{"in-place update keeps its own", []*messages.Allocation{withGPUs(withPort(testAlloc("old", "web", "n1", "e", 1, 1), 20000), "GPU-0")},
			nil, []string{"old"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.apply(registerNode(cloneTestNode(n1)))
			h.apply(registerJob(testJob("web", 10, 10), testEval("e", "web", messages.EvalStatusPending)))
			res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{
				withGPUs(withPort(testAlloc("old", "web", "n1", "e", 1, 1), 20000), "GPU-0")}})).(*messages.ApplyPlanResult)
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

// TestInPlaceUpdatesKeepWhatTheyHold: an in-place update (the same live
// allocation placed again on its node) is accepted on a node that turned
// ineligible or shrank, and with a GPU that turned unhealthy, as long as
// it takes nothing new; a port it did not hold is still checked.
func TestInPlaceUpdatesKeepWhatTheyHold(t *testing.T) {
	h := newHarness(t)
	n1 := testNode("n1", 1000, 1000)
	n1.NodeResources.Devices = []*messages.NodeDeviceResource{{Vendor: "nvidia", Type: "gpu", Name: "H100",
		Instances: []*messages.NodeDevice{{ID: "GPU-0", Healthy: true}}}}
	h.apply(registerNode(cloneTestNode(n1)))
	h.apply(registerJob(testJob("web", 10, 10), testEval("e", "web", messages.EvalStatusPending)))
	running := withGPUs(withPort(testAlloc("a1", "web", "n1", "e", 600, 600), 20000), "GPU-0")
	other := withPort(testAlloc("a2", "web", "n1", "e", 100, 100), 20001)
	res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{running, other}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1", "a2"}, res.Placed)

	// The node shrinks below what runs there, turns ineligible, and its GPU
	// fails.
	shrunk := cloneTestNode(n1)
	shrunk.NodeResources.Cpu.CpuShares, shrunk.NodeResources.Memory.MemoryMB = 500, 500
	shrunk.SchedulingEligibility = messages.NodeSchedulingIneligible
	shrunk.NodeResources.Devices[0].Instances[0].Healthy = false
	h.apply(registerNode(shrunk))

	update := withGPUs(withPort(testAlloc("a1", "web", "n1", "e", 600, 600), 20000), "GPU-0")
	update.JobVersion = 1
	res = h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{update}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1"}, res.Placed, "it takes nothing new")

	bigger := withGPUs(withPort(testAlloc("a1", "web", "n1", "e", 700, 600), 20000), "GPU-0")
	newPort := withGPUs(withPort(testAlloc("a1", "web", "n1", "e", 600, 600), 20001), "GPU-0")
	fresh := testAlloc("a3", "web", "n1", "e", 1, 1)
	res = h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{bigger}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1"}, res.Refused, "more CPU than the shrunk node has")
	res = h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{newPort}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a1"}, res.Refused, "a port another allocation holds")
	res = h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{fresh}})).(*messages.ApplyPlanResult)
	require.Equal(t, []string{"a3"}, res.Refused, "a new allocation on an ineligible node")
}

// TestInPlaceUpdateFromAStaleView: the scheduler's copy of an allocation
// may predate the client's last report or an operator's stop. An update
// of an allocation that ended or was stopped meanwhile is refused (it
// must not come back); an update of a live one keeps what the client
// reported since.
func TestInPlaceUpdateFromAStaleView(t *testing.T) {
	setup := func(t *testing.T) (*harness, *messages.Allocation) {
		h := newHarness(t)
		h.apply(registerNode(testNode("n1", 1000, 1000)))
		h.apply(registerJob(testJob("web", 10, 10), testEval("e", "web", messages.EvalStatusPending)))
		h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{testAlloc("a1", "web", "n1", "e", 100, 100)}}))
		running := proto.Clone(h.snap().AllocByID("a1")).(*messages.Allocation)
		running.ClientStatus = "running"
		h.apply(clientUpdate(running))
		stale := proto.Clone(h.snap().AllocByID("a1")).(*messages.Allocation) // what the scheduler saw
		stale.JobVersion = 1
		return h, stale
	}
	t.Run("failed meanwhile", func(t *testing.T) {
		h, stale := setup(t)
		failed := proto.Clone(stale).(*messages.Allocation)
		failed.ClientStatus, failed.ClientDescription = "failed", "task died"
		h.apply(clientUpdate(failed))
		res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{stale}})).(*messages.ApplyPlanResult)
		require.Equal(t, []string{"a1"}, res.Refused)
		require.Equal(t, "failed", h.snap().AllocByID("a1").GetClientStatus())
	})
	t.Run("stopped meanwhile", func(t *testing.T) {
		h, stale := setup(t)
		h.apply(&messages.Command{Cmd: &messages.Command_StopAlloc{StopAlloc: &messages.StopAlloc{AllocID: "a1",
			DesiredDescription: "stopped by an operator"}}})
		res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{stale}})).(*messages.ApplyPlanResult)
		require.Equal(t, []string{"a1"}, res.Refused)
		require.Equal(t, "stop", h.snap().AllocByID("a1").GetDesiredStatus())
	})
	t.Run("reported meanwhile", func(t *testing.T) {
		h, stale := setup(t)
		report := proto.Clone(stale).(*messages.Allocation)
		report.JobVersion = 0
		report.TaskStates = map[string]*messages.TaskState{"app": {State: "running", Restarts: 2}}
		report.ClientDescription = "Tasks are running"
		h.apply(clientUpdate(report))
		res := h.apply(plan(&messages.ApplyPlan{Place: []*messages.Allocation{stale}})).(*messages.ApplyPlanResult)
		require.Equal(t, []string{"a1"}, res.Placed)
		got := h.snap().AllocByID("a1")
		require.EqualValues(t, 1, got.GetJobVersion())
		require.EqualValues(t, 2, got.GetTaskStates()["app"].GetRestarts(), "the client's newer report is kept")
		require.Equal(t, "Tasks are running", got.GetClientDescription())
	})
}
