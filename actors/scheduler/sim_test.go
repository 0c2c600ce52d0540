package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

func TestSimulatedNodes(t *testing.T) {
	a, b := SimulatedNodes(200, 9), SimulatedNodes(200, 9)
	ids := map[string]bool{}
	for i, n := range a {
		require.True(t, proto.Equal(n, b[i]))
		require.False(t, ids[n.ID])
		ids[n.ID] = true
		require.Equal(t, messages.NodeStatusReady, n.Status)
		require.Equal(t, messages.NodeSchedulingEligible, n.SchedulingEligibility)
		require.Equal(t, "dc1", n.Datacenter)
		require.True(t, n.Drivers["exec"].Healthy)
		require.Equal(t, "linux", n.Attributes["kernel.name"])
		require.Equal(t, n.Name, n.Attributes["unique.hostname"])
		cpu, mem := n.NodeResources.Cpu.CpuShares, n.NodeResources.Memory.MemoryMB
		require.True(t, cpu >= 4000 && cpu <= 16000, "cpu %d", cpu)
		require.True(t, mem >= 8*1024 && mem <= 64*1024, "mem %d", mem)
	}
	require.NotEqual(t, a[0].ID, SimulatedNodes(1, 10)[0].ID)
}

func TestMemSnapshotUsageMatchesAllocs(t *testing.T) {
	job := testJob("web", jobTypeService, 40)
	s := newMemSnapshot(testNodes(10), job)
	plan := mustProcess(t, s, testEval(job), 1)
	s.ApplyPlan(plan)
	job.Version = 1
	job.TaskGroups[0].Count = 30
	withTotals := processWith(t, s, testEval(job), prefixedOpts(5, "v1"))
	summed := processWith(t, hideUsage{s}, testEval(job), prefixedOpts(5, "v1"))
	require.True(t, proto.Equal(withTotals, summed))
	s.ApplyPlan(withTotals)
	for _, n := range s.Nodes() {
		var cpu, mem int64
		for _, a := range s.AllocsByNode(n.ID) {
			if !a.TerminalStatus() {
				r := allocResources(a)
				cpu, mem = cpu+r.cpu, mem+r.mem
			}
		}
		gc, gm, _ := s.NodeUsage(n.ID)
		require.Equal(t, cpu, gc)
		require.Equal(t, mem, gm)
	}
	live := 0
	for _, a := range s.AllocsByJob("default", "web") {
		if !a.TerminalStatus() {
			live++
			require.Equal(t, uint64(1), a.JobVersion)
		}
	}
	require.Equal(t, 30, live)
}
