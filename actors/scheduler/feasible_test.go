package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// filteredNodes returns one node for each reason a node is filtered.
func filteredNodes() []*messages.Node {
	mk := func(id string, f func(n *messages.Node)) *messages.Node {
		n := testNode(id, 4000, 8192)
		f(n)
		return n
	}
	return []*messages.Node{
		mk("down", func(n *messages.Node) { n.Status = messages.NodeStatusDown }),
		mk("init", func(n *messages.Node) { n.Status = "initializing" }),
		mk("dc2", func(n *messages.Node) { n.Datacenter = "dc2" }),
		mk("inel", func(n *messages.Node) { n.SchedulingEligibility = "ineligible" }),
		mk("drain", func(n *messages.Node) { n.Drain = true }),
		mk("nodriver", func(n *messages.Node) { n.Drivers = nil }),
		mk("unhealthy", func(n *messages.Node) { n.Drivers["exec"].Healthy = false }),
		mk("win1", func(n *messages.Node) { n.Attributes["kernel.name"] = "windows" }),
		mk("win2", func(n *messages.Node) { n.Attributes["kernel.name"] = "windows" }),
	}
}

func linuxJob(count int32) *messages.Job {
	job := testJob("web", jobTypeService, count)
	job.Constraints = []*messages.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	return job
}

func TestFeasibilityFiltersAreReported(t *testing.T) {
	job := linuxJob(2)
	plan := mustProcess(t, newMemSnapshot(filteredNodes(), job), testEval(job), 1)
	require.Empty(t, plan.Place)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.NotNil(t, m)
	require.Equal(t, map[string]int32{
		filterNotReady: 2, filterDatacenter: 1, filterIneligible: 1, filterDraining: 1,
		filterMissingDrivers: 2, "${attr.kernel.name} = linux": 2,
	}, m.ConstraintFiltered)
	require.Equal(t, int32(4), m.NodesEvaluated)
	require.Equal(t, int32(4), m.NodesFiltered)
	require.Equal(t, int32(4), m.NodesInPool)
	require.Equal(t, map[string]int32{"dc1": 4}, m.NodesAvailable)
	require.Equal(t, int32(1), m.CoalescedFailures)
	require.Equal(t, int32(2), plan.EvalUpdate.QueuedAllocations["web"])
}

func TestFeasibleNodeIsChosen(t *testing.T) {
	job := linuxJob(1)
	nodes := append(filteredNodes(), testNode("good", 4000, 8192))
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	a := plan.Place[0]
	require.Equal(t, "good", a.NodeID)
	require.Equal(t, int32(5), a.Metrics.NodesEvaluated)
	require.Equal(t, int32(4), a.Metrics.NodesFiltered)
	require.Empty(t, plan.EvalUpdate.FailedTGAllocs)
	require.Empty(t, plan.NewEvals)
}

func TestGroupAndTaskConstraintsAreKeyed(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	tg := job.TaskGroups[0]
	tg.Constraints = []*messages.Constraint{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1"}}
	tg.Tasks[0].Constraints = []*messages.Constraint{{LTarget: "${attr.cpu.arch}", Operand: "=", RTarget: "arm64"}}
	nodes := testNodes(3)
	nodes[0].Meta["rack"] = "r1"
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Equal(t, map[string]int32{
		"${meta.rack} = r1": 2, "${attr.cpu.arch} = arm64": 1,
	}, plan.EvalUpdate.FailedTGAllocs["web"].ConstraintFiltered)
}

func TestDriverMustBeDetectedAndHealthy(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	job.TaskGroups[0].Tasks = append(job.TaskGroups[0].Tasks,
		&messages.Task{Name: "side", Driver: "docker"})
	nodes := testNodes(2)
	nodes[1].Drivers["docker"] = &messages.DriverInfo{Detected: true, Healthy: true}
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Len(t, plan.Place, 1)
	require.Equal(t, nodes[1].ID, plan.Place[0].NodeID)
	require.Equal(t, int32(1), plan.Place[0].Metrics.NodesFiltered)
}
