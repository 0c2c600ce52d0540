package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

const (
	modelH100 = "NVIDIA H100 80GB HBM3"
	modelH200 = "NVIDIA H200"
	modelA10  = "NVIDIA A10"
)

// gpus is an nvidia GPU group of model with healthy instances named
// <prefix>0, <prefix>1, ... and the given memory_mib attribute.
func gpus(model, memMiB, prefix string, n int) *messages.NodeDeviceResource {
	d := &messages.NodeDeviceResource{Vendor: "nvidia", Type: "gpu", Name: model,
		Attributes: map[string]string{"memory_mib": memMiB, "memory": memMiB + " MiB"}}
	for i := range n {
		d.Instances = append(d.Instances, &messages.NodeDevice{ID: fmt.Sprintf("%s%d", prefix, i), Healthy: true})
	}
	return d
}

// gpuNode is a roomy node with the given device groups.
func gpuNode(id string, groups ...*messages.NodeDeviceResource) *messages.Node {
	n := testNode(id, 64000, 512*1024)
	n.NodeResources.Devices = groups
	return n
}

// gpuJob is a service job whose task asks for devs.
func gpuJob(id string, count int32, devs ...*messages.RequestedDevice) *messages.Job {
	job := testJob(id, jobTypeService, count)
	job.TaskGroups[0].Tasks[0].Resources.Devices = devs
	return job
}

func gpuReq(name string, count uint64) *messages.RequestedDevice {
	return &messages.RequestedDevice{Name: name, Count: count}
}

// deviceIDs lists the instance IDs an alloc holds, over all its tasks.
func deviceIDs(a *messages.Allocation) []string {
	var out []string
	for _, t := range a.GetAllocatedResources().GetTasks() {
		for _, d := range t.GetDevices() {
			out = append(out, d.DeviceIDs...)
		}
	}
	return out
}

// gpuHolder is a running alloc of another job on node holding ids of the
// nvidia GPU group of model.
func gpuHolder(id, node, model string, ids ...string) *messages.Allocation {
	a := testAlloc(testJob("other-"+id, jobTypeService, 1), node, 0)
	a.ID = id
	a.AllocatedResources.Tasks["server"].Devices = []*messages.AllocatedDeviceResource{
		{Vendor: "nvidia", Type: "gpu", Name: model, DeviceIDs: ids}}
	return a
}

// requireNoSharedDevices fails when two live allocs on one node hold the
// same instance.
func requireNoSharedDevices(t *testing.T, snap *MemSnapshot) {
	t.Helper()
	for _, n := range snap.Nodes() {
		holder := map[string]string{}
		for _, a := range snap.AllocsByNode(n.ID) {
			if a.TerminalStatus() {
				continue
			}
			for _, id := range deviceIDs(a) {
				require.Empty(t, holder[id], "node %s: %s held by %s and %s", n.ID, id, holder[id], a.ID)
				holder[id] = a.ID
			}
		}
	}
}

func TestDeviceNameMatchesGroup(t *testing.T) {
	h100 := gpus(modelH100, "81559", "g", 1)
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"gpu", true}, {"nvidia/gpu", true}, {"nvidia/gpu/" + modelH100, true},
		{"amd/gpu", false}, {"fpga", false}, {"nvidia/fpga", false},
		{"nvidia/gpu/" + modelA10, false}, {"", false},
	} {
		require.Equal(t, tc.want, parseDeviceName(tc.name).matches(h100), tc.name)
	}
}

func TestDevicesGoOnlyWhereEnoughHealthyInstancesAreFree(t *testing.T) {
	sick := gpus(modelH100, "81559", "s", 2)
	sick.Instances[0].Healthy = false
	nodes := []*messages.Node{
		testNode("none", 64000, 512*1024),
		gpuNode("one", gpus(modelH100, "81559", "o", 1)),
		gpuNode("sick", sick),
		gpuNode("busy", gpus(modelH100, "81559", "b", 2)),
		gpuNode("fpga", &messages.NodeDeviceResource{Vendor: "xilinx", Type: "fpga", Name: "u250",
			Instances: []*messages.NodeDevice{{ID: "f0", Healthy: true}, {ID: "f1", Healthy: true}}}),
		gpuNode("ok", gpus(modelH100, "81559", "k", 2)),
	}
	job := gpuJob("train", 2, gpuReq("nvidia/gpu", 2))
	snap := newMemSnapshot(nodes, job)
	snap.AddAlloc(gpuHolder("holder", "busy", modelH100, "b1"))

	plan := mustProcess(t, snap, testEval(job), 1)
	require.Len(t, plan.Place, 1)
	a := plan.Place[0]
	require.Equal(t, "ok", a.NodeID)
	require.Equal(t, []*messages.AllocatedDeviceResource{{Vendor: "nvidia", Type: "gpu", Name: modelH100,
		DeviceIDs: []string{"k0", "k1"}}}, a.AllocatedResources.Tasks["server"].Devices)
	require.Empty(t, job.TaskGroups[0].Tasks[0].Resources.Devices[0].Constraints, "the job is not changed")

	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.NotNil(t, m, "the second alloc has nowhere to go")
	require.Equal(t, int32(6), m.NodesEvaluated)
	require.Equal(t, map[string]int32{filterMissingDevices: 4}, m.ConstraintFiltered,
		"none, one, sick (one healthy) and fpga lack two healthy GPUs")
	require.Equal(t, map[string]int32{
		"devices: no device group matches nvidia/gpu with 2 free healthy instances": 2}, m.DimensionExhausted,
		"busy has one free, ok is taken by the first alloc")
}

func TestUnhealthyDeviceInstanceIsNeverGiven(t *testing.T) {
	g := gpus(modelH100, "81559", "g", 3)
	g.Instances[0].Healthy = false
	g.Instances[2].Healthy = false
	job := gpuJob("train", 2, gpuReq("gpu", 1))
	plan := mustProcess(t, newMemSnapshot([]*messages.Node{gpuNode("n1", g)}, job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	require.Equal(t, []string{"g1"}, deviceIDs(plan.Place[0]))
	require.Equal(t, int32(1), plan.EvalUpdate.FailedTGAllocs["web"].DimensionExhausted[dimDevicesPrefix+
		"no device group matches gpu with 1 free healthy instances"])
}

func TestDeviceConstraintFiltersSmallGPUs(t *testing.T) {
	for _, c := range []*messages.Constraint{
		{LTarget: "${device.attr.memory_mib}", Operand: ">=", RTarget: "40000"},
		{LTarget: "${device.attr.memory}", Operand: ">=", RTarget: "40 GiB"},
	} {
		t.Run(c.LTarget, func(t *testing.T) {
			nodes := []*messages.Node{gpuNode("small", gpus(modelA10, "23028", "a", 4)),
				gpuNode("big", gpus(modelH100, "81559", "h", 1))}
			req := gpuReq("nvidia/gpu", 1)
			req.Constraints = []*messages.Constraint{c}
			job := gpuJob("train", 2, req)
			plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
			require.Len(t, plan.Place, 1)
			require.Equal(t, "big", plan.Place[0].NodeID)
			require.Equal(t, []string{"h0"}, deviceIDs(plan.Place[0]))
			m := plan.EvalUpdate.FailedTGAllocs["web"]
			require.Equal(t, int32(1), m.ConstraintFiltered[filterMissingDevices], "small's GPUs are too small")
			require.Equal(t, int32(1), m.NodesExhausted, "big's only GPU is taken")
		})
	}
}

func TestDeviceRuleOperands(t *testing.T) {
	d := gpus(modelH100, "81559", "g", 1)
	d.Attributes["cuda"] = "12.4"
	d.Attributes["clock"] = "1.98 GHz"
	m := newMatcher()
	for _, tc := range []struct {
		l, op, r string
		want     bool
	}{
		{"${device.attr.memory_mib}", ">=", "40000", true},
		{"${device.attr.memory_mib}", "<", "40000", false},
		{"${device.attr.memory}", ">", "80 GiB", false}, // 81559 MiB is 79.6 GiB
		{"${device.attr.memory}", ">", "79 GiB", true},
		{"${device.attr.memory}", "=", "81559 MiB", true},
		{"${device.attr.memory}", "!=", "81559 MiB", false},
		{"${device.attr.clock}", ">=", "1500 MHz", true},
		{"${device.attr.clock}", ">=", "1500 MiB", false}, // units of another kind compare as text
		{"${device.model}", "=", modelH100, true},
		{"${device.model}", "regexp", "H(100|200)", true},
		{"${device.vendor}", "=", "nvidia", true},
		{"${device.type}", "!=", "gpu", false},
		{"${device.attr.cuda}", "version", ">= 12.0", true},
		{"${device.attr.missing}", "is_not_set", "", true},
		{"${device.attr.missing}", "=", "x", false},
		{"${device.ids}", "set_contains", "g0", false},
	} {
		r := deviceRule{op: tc.op, l: parseDevTarget(tc.l), r: parseDevTarget(tc.r)}
		require.Equal(t, tc.want, m.checkDevice(&r, d), "%s %s %s", tc.l, tc.op, tc.r)
	}
}

func TestDeviceAffinityPrefersTheH200Node(t *testing.T) {
	for _, tc := range []struct {
		weight int32
		want   string
	}{{50, "h200"}, {-50, "h100"}} {
		for seed := range uint64(8) {
			nodes := []*messages.Node{gpuNode("h100", gpus(modelH100, "81559", "a", 8)),
				gpuNode("h200", gpus(modelH200, "143771", "b", 8))}
			req := gpuReq("nvidia/gpu", 1)
			req.Affinities = []*messages.Affinity{{LTarget: "${device.model}", Operand: "=",
				RTarget: modelH200, Weight: tc.weight}}
			job := gpuJob("train", 1, req)
			plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), seed)
			require.Len(t, plan.Place, 1)
			require.Equal(t, tc.want, plan.Place[0].NodeID, "weight %d seed %d", tc.weight, seed)
		}
	}
}

func TestDeviceAffinityPicksTheGroupOnANode(t *testing.T) {
	req := gpuReq("gpu", 2)
	req.Affinities = []*messages.Affinity{{LTarget: "${device.attr.memory_mib}", Operand: ">",
		RTarget: "100000", Weight: 100}}
	job := gpuJob("train", 1, req)
	node := gpuNode("n1", gpus(modelH100, "81559", "a", 8), gpus(modelH200, "143771", "b", 8))
	plan := mustProcess(t, newMemSnapshot([]*messages.Node{node}, job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	devs := plan.Place[0].AllocatedResources.Tasks["server"].Devices
	require.Len(t, devs, 1)
	require.Equal(t, modelH200, devs[0].Name)
	require.Equal(t, []string{"b0", "b1"}, devs[0].DeviceIDs)
}

func TestEightGPUsGoToEightAllocsAndTheNinthFails(t *testing.T) {
	job := gpuJob("train", 9, gpuReq("nvidia/gpu", 1))
	snap := newMemSnapshot([]*messages.Node{gpuNode("n1", gpus(modelH100, "81559", "g", 8))}, job)
	plan := mustProcess(t, snap, testEval(job), 1)
	require.Len(t, plan.Place, 8)
	var ids []string
	for _, a := range plan.Place {
		require.Len(t, deviceIDs(a), 1)
		ids = append(ids, deviceIDs(a)...)
	}
	require.ElementsMatch(t, []string{"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7"}, ids)
	key := "devices: no device group matches nvidia/gpu with 1 free healthy instances"
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.Equal(t, map[string]int32{key: 1}, m.DimensionExhausted)
	require.Equal(t, int32(1), plan.EvalUpdate.QueuedAllocations["web"])
	require.NotEmpty(t, plan.EvalUpdate.BlockedEval)

	snap.ApplyPlan(plan)
	blocked := plan.NewEvals[0]
	again := mustProcess(t, snap, blocked, 1)
	require.Empty(t, again.Place, "the eight GPUs are held by the allocs placed before")
	require.Equal(t, map[string]int32{key: 1}, again.EvalUpdate.FailedTGAllocs["web"].DimensionExhausted)
	requireNoSharedDevices(t, snap)
}

func TestTwoTasksOfAnAllocGetDistinctGPUs(t *testing.T) {
	job := gpuJob("train", 1, gpuReq("gpu", 1))
	tg := job.TaskGroups[0]
	tg.Tasks = append(tg.Tasks, &messages.Task{Name: "side", Driver: "exec",
		Resources: &messages.Resources{CPU: 100, MemoryMB: 64, Devices: []*messages.RequestedDevice{gpuReq("gpu", 1)}}})
	plan := mustProcess(t, newMemSnapshot([]*messages.Node{gpuNode("n1", gpus(modelH100, "81559", "g", 2))}, job),
		testEval(job), 1)
	require.Len(t, plan.Place, 1)
	tasks := plan.Place[0].AllocatedResources.Tasks
	require.Equal(t, []string{"g0"}, tasks["server"].Devices[0].DeviceIDs)
	require.Equal(t, []string{"g1"}, tasks["side"].Devices[0].DeviceIDs)
}

func TestTwoRequestsOfATaskShareNoInstances(t *testing.T) {
	job := gpuJob("train", 1, gpuReq("gpu", 4), gpuReq("nvidia/gpu", 4))
	nodes := []*messages.Node{gpuNode("six", gpus(modelH100, "81559", "s", 6)),
		gpuNode("eight", gpus(modelH100, "81559", "e", 8))}
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	require.Equal(t, "eight", plan.Place[0].NodeID, "six healthy GPUs cannot hold 4 + 4")
	devs := plan.Place[0].AllocatedResources.Tasks["server"].Devices
	require.Len(t, devs, 2)
	require.Equal(t, []string{"e0", "e1", "e2", "e3"}, devs[0].DeviceIDs)
	require.Equal(t, []string{"e4", "e5", "e6", "e7"}, devs[1].DeviceIDs)

	job.TaskGroups[0].Count = 2
	plan = mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Equal(t, int32(1), plan.EvalUpdate.FailedTGAllocs["web"].ConstraintFiltered[filterMissingDevices])
}
