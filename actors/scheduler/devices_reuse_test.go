package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func TestTerminalAllocReleasesItsGPU(t *testing.T) {
	for _, end := range []struct {
		name string
		set  func(a *messages.Allocation)
	}{
		{"complete", func(a *messages.Allocation) { a.ClientStatus = messages.AllocClientStatusComplete }},
		{"failed", func(a *messages.Allocation) { a.ClientStatus = messages.AllocClientStatusFailed }},
		{"stopped", func(a *messages.Allocation) { a.DesiredStatus = messages.AllocDesiredStatusStop }},
	} {
		t.Run(end.name, func(t *testing.T) {
			job := gpuJob("train", 1, gpuReq("nvidia/gpu", 1))
			snap := newMemSnapshot([]*messages.Node{gpuNode("n1", gpus(modelH100, "81559", "g", 1))}, job)
			holder := gpuHolder("holder", "n1", modelH100, "g0")
			snap.AddAlloc(holder)
			plan := mustProcess(t, snap, testEval(job), 1)
			require.Empty(t, plan.Place, "g0 is held")

			done := cloneAlloc(holder)
			end.set(done)
			snap.AddAlloc(done)
			plan = mustProcess(t, snap, testEval(job), 1)
			require.Len(t, plan.Place, 1)
			require.Equal(t, []string{"g0"}, deviceIDs(plan.Place[0]))
		})
	}
}

func TestUpdatedAllocsTakeOverTheGPUsTheirPredecessorsFree(t *testing.T) {
	job := gpuJob("train", 2, gpuReq("nvidia/gpu", 1))
	snap := newMemSnapshot([]*messages.Node{gpuNode("n1", gpus(modelH100, "81559", "g", 2))}, job)
	first := mustProcess(t, snap, testEval(job), 1)
	require.Len(t, first.Place, 2)
	snap.ApplyPlan(first)

	v1 := gpuJob("train", 2, gpuReq("nvidia/gpu", 1))
	changeTasks(v1, 1)
	snap.AddJob(v1)
	plan := mustProcess(t, snap, testEval(v1), 1)
	require.Len(t, plan.Place, 2, "each old alloc's stop frees its GPU in the same plan")
	var ids []string
	for _, a := range plan.Place {
		ids = append(ids, deviceIDs(a)...)
	}
	require.ElementsMatch(t, []string{"g0", "g1"}, ids)
	stops := stopsByID(plan)
	for _, a := range first.Place {
		require.Contains(t, stops, a.ID)
	}
	snap.ApplyPlan(plan)
	requireNoSharedDevices(t, snap)
}

// TestHundredPlacementsOverManyPlansNeverShareAGPU plans jobs one eval
// after another, as the scheduler actor does, committing each plan before
// the next, with a job stopped on the way.
func TestHundredPlacementsOverManyPlansNeverShareAGPU(t *testing.T) {
	var nodes []*messages.Node
	for i := range 10 {
		nodes = append(nodes, gpuNode(fmt.Sprintf("h100-%d", i), gpus(modelH100, "81559", "a", 8)))
		nodes = append(nodes, gpuNode(fmt.Sprintf("mix-%d", i), gpus(modelH200, "143771", "b", 4),
			gpus(modelA10, "23028", "c", 4)))
	}
	snap := newMemSnapshot(nodes)
	process := func(job *messages.Job, eval *messages.Evaluation, seed uint64) *messages.ApplyPlan {
		t.Helper()
		plan := mustProcess(t, snap, eval, seed)
		snap.ApplyPlan(plan)
		requireNoSharedDevices(t, snap)
		return plan
	}
	placed := 0
	for j := range 10 {
		req := gpuReq("nvidia/gpu", 1+uint64(j%2)) // 1 or 2 GPUs an alloc
		if j%3 == 0 {
			req.Affinities = []*messages.Affinity{{LTarget: "${device.model}", Operand: "=",
				RTarget: modelH200, Weight: 50}}
		}
		job := gpuJob(fmt.Sprintf("j%d", j), 10, req)
		snap.AddJob(job)
		eval := testEval(job)
		eval.ID = "eval-" + job.ID
		plan := process(job, eval, uint64(j))
		require.Empty(t, plan.EvalUpdate.FailedTGAllocs, job.ID)
		placed += len(plan.Place)
	}
	require.Equal(t, 100, placed, "150 of the 160 GPUs are held")

	big := gpuJob("big", 15, gpuReq("nvidia/gpu", 1))
	snap.AddJob(big)
	plan := process(big, testEval(big), 99)
	require.Len(t, plan.Place, 10, "10 GPUs are left for 15 allocs")
	require.NotEmpty(t, plan.NewEvals)
	blocked := plan.NewEvals[0]

	stopped := snap.JobByID("default", "j1") // 10 allocs of 2 GPUs
	stopped.Stop = true
	process(stopped, testEval(stopped), 100)
	plan = process(big, blocked, 101)
	require.Len(t, plan.Place, 5, "the stopped job's GPUs go to big")
	require.Empty(t, plan.EvalUpdate.FailedTGAllocs)
	total := 0
	for _, a := range snap.AllocsByJob("default", "big") {
		require.False(t, a.TerminalStatus())
		require.Len(t, deviceIDs(a), 1)
		total++
	}
	require.Equal(t, 15, total)
}

func TestSystemJobTakesAFreeGPUOnEachGPUNode(t *testing.T) {
	job := gpuJob("agent", 0, gpuReq("gpu", 1))
	job.Type = jobTypeSystem
	nodes := []*messages.Node{gpuNode("a", gpus(modelH100, "81559", "a", 2)),
		gpuNode("b", gpus(modelH100, "81559", "b", 1)), testNode("cpu", 4000, 8192)}
	snap := newMemSnapshot(nodes, job)
	snap.AddAlloc(gpuHolder("holder-a", "a", modelH100, "a0"))
	snap.AddAlloc(gpuHolder("holder-b", "b", modelH100, "b0"))
	plan := mustProcess(t, snap, testEval(job), 1)
	require.Len(t, plan.Place, 1)
	require.Equal(t, "a", plan.Place[0].NodeID)
	require.Equal(t, []string{"a1"}, deviceIDs(plan.Place[0]))
	m := plan.EvalUpdate.FailedTGAllocs["web"]
	require.Equal(t, map[string]int32{"devices: no device group matches gpu with 1 free healthy instances": 1},
		m.DimensionExhausted, "b's GPU is held; the cpu node is not a candidate")
}
