package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

// systemNodes: n00-n02 usable; then ineligible, down, dc2, no driver.
func systemNodes() []*messages.Node {
	nodes := testNodes(7)
	nodes[3].SchedulingEligibility = "ineligible"
	nodes[4].Status = messages.NodeStatusDown
	nodes[5].Datacenter = "dc2"
	nodes[6].Drivers = nil
	return nodes
}

func TestSystemJobRunsOnEveryEligibleNode(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	s := newMemSnapshot(systemNodes(), job)
	plan := mustProcess(t, s, testEval(job), 1)
	var nodes []string
	for _, a := range plan.Place {
		require.Equal(t, "sys.web[0]", a.Name)
		nodes = append(nodes, a.NodeID)
	}
	require.Equal(t, []string{"n00", "n01", "n02"}, nodes)
	require.Empty(t, plan.EvalUpdate.FailedTGAllocs, "infeasible nodes are not failures")
	require.Empty(t, plan.NewEvals)

	s.ApplyPlan(plan)
	again := mustProcess(t, s, testEval(job), 1)
	require.Empty(t, again.Place)
	require.Empty(t, again.Stop)
}

func TestSystemJobReconcilesNodes(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	s := newMemSnapshot(systemNodes(), job)
	for _, n := range []string{"n00", "n03", "n04", "n05", "n06"} {
		s.AddAlloc(testAlloc(job, n, 0))
	}
	s.AddAlloc(testAlloc(job, "gone", 0))
	plan := mustProcess(t, s, testEval(job), 1)
	stops := stopsByID(plan)
	require.NotContains(t, stops, "a-n00-0", "kept on a healthy node")
	require.NotContains(t, stops, "a-n03-0", "kept on an ineligible node")
	require.Equal(t, messages.AllocClientStatusLost, stops["a-n04-0"].ClientStatus)
	require.Equal(t, descNotNeeded, stops["a-n05-0"].DesiredDescription)
	require.Equal(t, descNodeTainted, stops["a-n06-0"].DesiredDescription)
	require.Equal(t, messages.AllocClientStatusLost, stops["a-gone-0"].ClientStatus)
	require.Len(t, stops, 4)
	var nodes []string
	for _, a := range plan.Place {
		nodes = append(nodes, a.NodeID)
	}
	require.Equal(t, []string{"n01", "n02"}, nodes)
}

func TestSystemJobUpdateReplacesInPlace(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	nodes := testNodes(2)
	nodes[0].NodeResources.Memory.MemoryMB = 300 // room for only one alloc
	s := newMemSnapshot(nodes, job)
	s.AddAlloc(testAlloc(job, "n00", 0))
	s.AddAlloc(testAlloc(job, "n01", 0))
	changeTasks(job, 2)
	plan := mustProcess(t, s, testEval(job), 1)
	require.Len(t, plan.Place, 2)
	for _, a := range plan.Place {
		require.Equal(t, "a-"+a.NodeID+"-0", a.PreviousAllocation)
		require.Equal(t, uint64(2), a.JobVersion)
	}
	require.Len(t, plan.Stop, 2)
	require.Equal(t, descUpdating, plan.Stop[0].DesiredDescription)
}

func TestSystemJobExhaustedNodeFails(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	nodes := testNodes(3)
	nodes[1].NodeResources.Memory.MemoryMB = 100
	plan := mustProcess(t, newMemSnapshot(nodes, job), testEval(job), 1)
	require.Len(t, plan.Place, 2)
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.Equal(t, map[string]int32{dimMemory: 1}, m.DimensionExhausted)
	require.Equal(t, int32(1), plan.EvalUpdate.QueuedAllocations["web"])
	require.Len(t, plan.NewEvals, 1)
	require.Equal(t, messages.EvalStatusBlocked, plan.NewEvals[0].Status)
}

func TestSystemJobStopped(t *testing.T) {
	job := testJob("sys", jobTypeSystem, 0)
	s := newMemSnapshot(testNodes(2), job)
	s.AddAlloc(testAlloc(job, "n00", 0))
	s.AddAlloc(testAlloc(job, "n01", 0))
	job.Stop = true
	plan := mustProcess(t, s, testEval(job), 1)
	require.Len(t, plan.Stop, 2)
	require.Empty(t, plan.Place)
}

func TestSysbatchCompletedIsNotRerun(t *testing.T) {
	job := testJob("sb", jobTypeSysBatch, 0)
	s := newMemSnapshot(testNodes(2), job)
	done := testAlloc(job, "n00", 0)
	done.ClientStatus = messages.AllocClientStatusComplete
	s.AddAlloc(done)
	plan := mustProcess(t, s, testEval(job), 1)
	require.Equal(t, []string{"sb.web[0]"}, placedNames(plan))
	require.Equal(t, "n01", plan.Place[0].NodeID)
}
