package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// portJob is a service job whose group asks for the given static and
// dynamic ports in one bridge network.
func portJob(id string, count int32, reserved, dynamic []*messages.Port) *messages.Job {
	job := testJob(id, jobTypeService, count)
	job.TaskGroups[0].Networks = []*messages.NetworkResource{{Mode: "bridge",
		ReservedPorts: reserved, DynamicPorts: dynamic}}
	return job
}

func httpStatic() []*messages.Port { return []*messages.Port{{Label: "http", Value: 8080, To: 80}} }

// allocPorts lists the host ports an alloc was given, by label.
func allocPorts(a *messages.Allocation) map[string]int32 {
	out := map[string]int32{}
	for _, n := range a.GetAllocatedResources().GetShared().GetNetworks() {
		for _, p := range append(n.ReservedPorts, n.DynamicPorts...) {
			out[p.Label] = p.Value
		}
	}
	return out
}

// holding is a running alloc of another job on node that holds ports.
func holding(id, node string, ports ...int32) *messages.Allocation {
	other := testJob("other-"+id, jobTypeService, 1)
	a := testAlloc(other, node, 0)
	a.ID = id
	var rp []*messages.Port
	for _, v := range ports {
		rp = append(rp, &messages.Port{Label: "p", Value: v})
	}
	a.AllocatedResources.Shared = &messages.AllocatedSharedResources{
		Networks: []*messages.NetworkResource{{ReservedPorts: rp}}}
	return a
}

func TestDynamicPortsAreDistinctOnOneNode(t *testing.T) {
	job := portJob("web", 2, nil, []*messages.Port{{Label: "a", To: 9000}, {Label: "b", To: -1}})
	node := testNode("n00", 4000, 8192)
	node.HTTPAddr = "10.1.2.3:4646"
	snap := newMemSnapshot([]*messages.Node{node}, job)
	plan := mustProcess(t, snap, testEval(job), 1)
	require.Len(t, plan.Place, 2)
	seen := map[int32]bool{}
	for _, a := range plan.Place {
		require.Equal(t, "n00", a.NodeID)
		nets := a.AllocatedResources.Shared.Networks
		require.Len(t, nets, 1)
		require.Equal(t, "bridge", nets[0].Mode)
		require.Equal(t, "10.1.2.3", nets[0].IP)
		a, b := nets[0].DynamicPorts[0], nets[0].DynamicPorts[1]
		require.Equal(t, int32(9000), a.To, "a given To is kept")
		require.Equal(t, b.Value, b.To, "To -1 maps to the host port")
		for _, p := range []*messages.Port{a, b} {
			require.GreaterOrEqual(t, p.Value, int32(defaultMinDynamicPort))
			require.LessOrEqual(t, p.Value, int32(defaultMaxDynamicPort))
			require.False(t, seen[p.Value], "port %d given twice", p.Value)
			seen[p.Value] = true
		}
	}
	require.Empty(t, job.TaskGroups[0].Networks[0].DynamicPorts[0].Value, "the job is not changed")

	again := mustProcess(t, snap, testEval(job), 1)
	for i := range plan.Place {
		require.Equal(t, allocPorts(plan.Place[i]), allocPorts(again.Place[i]), "same seed, same ports")
	}
}

func TestDynamicPortsRunOut(t *testing.T) {
	job := portJob("web", 3, nil, []*messages.Port{{Label: "a"}})
	opts := testOpts(1)
	opts.MinDynamicPort, opts.MaxDynamicPort = 30000, 30001
	snap := newMemSnapshot(testNodes(1), job)
	plan := processWith(t, snap, testEval(job), opts)
	require.Len(t, plan.Place, 2)
	require.ElementsMatch(t, []int32{30000, 30001},
		[]int32{allocPorts(plan.Place[0])["a"], allocPorts(plan.Place[1])["a"]})
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.NotNil(t, m)
	require.Equal(t, map[string]int32{dimNetworkPrefix + reasonDynamicPorts: 1}, m.DimensionExhausted)
	require.Equal(t, int32(1), m.NodesExhausted)

	// The node's own range wins over the options'.
	node := testNode("n00", 4000, 8192)
	node.NodeResources.MinDynamicPort, node.NodeResources.MaxDynamicPort = 40000, 40002
	plan = processWith(t, newMemSnapshot([]*messages.Node{node}, job), testEval(job), opts)
	require.Len(t, plan.Place, 3)
	for _, a := range plan.Place {
		require.GreaterOrEqual(t, allocPorts(a)["a"], int32(40000))
	}
}

func TestStaticPortCollision(t *testing.T) {
	job := portJob("web", 2, httpStatic(), nil)
	plan := mustProcess(t, newMemSnapshot(testNodes(2), job), testEval(job), 1)
	require.Len(t, plan.Place, 2)
	require.NotEqual(t, plan.Place[0].NodeID, plan.Place[1].NodeID)
	for _, a := range plan.Place {
		p := a.AllocatedResources.Shared.Networks[0].ReservedPorts[0]
		require.Equal(t, int32(8080), p.Value)
		require.Equal(t, int32(80), p.To)
	}

	plan = mustProcess(t, newMemSnapshot(testNodes(1), job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.NotNil(t, m)
	require.Equal(t, map[string]int32{"network: reserved port collision http=8080": 1}, m.DimensionExhausted)
	require.Equal(t, int32(1), m.NodesExhausted)
	require.Equal(t, int32(1), plan.EvalUpdate.QueuedAllocations["web"])
}

func TestPortsOfLiveAllocsCountAndTerminalOnesDoNot(t *testing.T) {
	job := portJob("web", 1, httpStatic(), nil)
	snap := newMemSnapshot(testNodes(2), job)
	snap.AddAlloc(holding("h0", "n00", 8080))
	for seed := range uint64(8) {
		plan := mustProcess(t, snap, testEval(job), seed)
		require.Len(t, plan.Place, 1)
		require.Equal(t, "n01", plan.Place[0].NodeID, "seed %d", seed)
	}

	one := newMemSnapshot(testNodes(1), job)
	h := holding("h0", "n00", 8080)
	one.AddAlloc(h)
	require.Empty(t, mustProcess(t, one, testEval(job), 1).Place)
	done := cloneAlloc(h)
	done.ClientStatus = messages.AllocClientStatusComplete
	one.AddAlloc(done)
	plan := mustProcess(t, one, testEval(job), 1)
	require.Len(t, plan.Place, 1, "a terminal alloc's port is free again")
	require.Equal(t, "n00", plan.Place[0].NodeID)
}

func TestPortsPlacedEarlierInThePlanCount(t *testing.T) {
	job := portJob("web", 1, httpStatic(), []*messages.Port{{Label: "d"}})
	second := proto.Clone(job.TaskGroups[0]).(*messages.TaskGroup)
	second.Name = "api"
	job.TaskGroups = append(job.TaskGroups, second)
	opts := testOpts(1)
	opts.MinDynamicPort, opts.MaxDynamicPort = 30000, 30002
	plan := processWith(t, newMemSnapshot(testNodes(1), job), testEval(job), opts)
	require.Len(t, plan.Place, 1, "the second group's 8080 collides with the first's")
	require.Equal(t, map[string]int32{"network: reserved port collision http=8080": 1},
		plan.EvalUpdate.FailedTGAllocs["api"].DimensionExhausted)

	// Without the static port both fit, with distinct dynamic ports.
	for _, tg := range job.TaskGroups {
		tg.Networks[0].ReservedPorts = nil
	}
	plan = processWith(t, newMemSnapshot(testNodes(1), job), testEval(job), opts)
	require.Len(t, plan.Place, 2)
	require.NotEqual(t, allocPorts(plan.Place[0])["d"], allocPorts(plan.Place[1])["d"])
}

// An update stops the old allocs on the node; their ports are free for
// the replacements, whether the stop comes before or after the node's
// ports were read.
func TestPortsOfAllocsStoppedByThePlanAreFree(t *testing.T) {
	job := portJob("web", 2, nil, []*messages.Port{{Label: "d"}})
	snap := newMemSnapshot(testNodes(1), job)
	for i, port := range []int32{30000, 30001} {
		a := testAlloc(job, "n00", uint32(i))
		a.AllocatedResources.Shared = &messages.AllocatedSharedResources{
			Networks: []*messages.NetworkResource{{DynamicPorts: []*messages.Port{{Label: "d", Value: port}}}}}
		snap.AddAlloc(a)
	}
	changeTasks(job, 1)
	opts := testOpts(1)
	opts.MinDynamicPort, opts.MaxDynamicPort = 30000, 30001
	plan := processWith(t, snap, testEval(job), opts)
	require.Len(t, plan.Place, 2)
	require.Len(t, plan.Stop, 2)
	require.ElementsMatch(t, []int32{30000, 30001},
		[]int32{allocPorts(plan.Place[0])["d"], allocPorts(plan.Place[1])["d"]})
}

func TestGroupWithoutNetworkPaysNothing(t *testing.T) {
	job := testJob("web", jobTypeService, 2)
	snap := newMemSnapshot(testNodes(2), job)
	snap.AddAlloc(holding("h0", "n00", 8080))
	p := newPlanner(snap, testEval(job), testOpts(1))
	require.NoError(t, p.run())
	require.Nil(t, p.ports, "no port sets for groups without ports")
	require.Len(t, p.plan.Place, 2)
	for _, a := range p.plan.Place {
		require.Nil(t, a.AllocatedResources.Shared)
	}

	// A network without ports is copied, and still builds no port sets.
	job.TaskGroups[0].Networks = []*messages.NetworkResource{{Mode: "host"}}
	p = newPlanner(snap, testEval(job), testOpts(1))
	require.NoError(t, p.run())
	require.Nil(t, p.ports)
	require.Equal(t, "host", p.plan.Place[0].AllocatedResources.Shared.Networks[0].Mode)
}

func TestSystemJobPortCollision(t *testing.T) {
	job := portJob("sys", 1, httpStatic(), nil)
	job.Type = jobTypeSystem
	snap := newMemSnapshot(testNodes(2), job)
	snap.AddAlloc(holding("h0", "n01", 8080))
	plan := mustProcess(t, snap, testEval(job), 1)
	require.Len(t, plan.Place, 1)
	require.Equal(t, "n00", plan.Place[0].NodeID)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.NotNil(t, m)
	require.Equal(t, map[string]int32{"network: reserved port collision http=8080": 1}, m.DimensionExhausted)
}

func TestNodeIP(t *testing.T) {
	for addr, want := range map[string]string{"10.0.0.7:4646": "10.0.0.7", "[fd00::1]:4646": "fd00::1",
		"0.0.0.0:4646": "", "": "", "host.example:4646": ""} {
		require.Equal(t, want, nodeIP(&messages.Node{HTTPAddr: addr}), addr)
	}
	n := &messages.Node{HTTPAddr: "10.0.0.7:4646", Attributes: map[string]string{nodeIPAttribute: "192.168.1.5"}}
	require.Equal(t, "192.168.1.5", nodeIP(n))
}

func TestNodePortsCountsHoldersAndRange(t *testing.T) {
	np := &nodePorts{min: 100, max: 199}
	np.add(150, 1)
	np.add(150, 1) // a second holder (a conflict in the snapshot)
	np.add(8080, 1)
	require.Equal(t, int32(1), np.inRange)
	np.add(150, -1)
	require.Equal(t, int32(1), np.inRange, "still held once")
	np.add(150, -1)
	np.add(150, -1) // never below zero
	require.Equal(t, int32(0), np.inRange)
	require.Equal(t, map[int32]int32{8080: 1}, np.used)

	// All but one port used: random tries miss, the scan finds it.
	for v := int32(100); v <= 199; v++ {
		if v != 123 {
			np.add(v, 1)
		}
	}
	require.Equal(t, int32(123), np.pick(testOpts(1).Rand, nil))
	require.Equal(t, int32(0), np.pick(testOpts(1).Rand, []int32{123}))
}
