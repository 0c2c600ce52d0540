package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// TestMaxPlacementsSplitsAJob: with a placements-per-evaluation limit a
// large job is placed in bounded plans, each leaving a follow-up
// evaluation for the rest, until the count is reached; nothing is placed
// twice.
func TestMaxPlacementsSplitsAJob(t *testing.T) {
	job := testJob("big", jobTypeService, 25)
	snap := newMemSnapshot(testNodes(10), job)
	eval := testEval(job)
	var sizes []int
	for range 5 {
		opts := testOpts(1)
		opts.MaxPlacements = 10
		plan := processWith(t, snap, eval, opts)
		sizes = append(sizes, len(plan.Place))
		snap.ApplyPlan(plan)
		if len(plan.NewEvals) == 0 {
			break
		}
		require.Len(t, plan.NewEvals, 1)
		next := plan.NewEvals[0]
		require.Equal(t, messages.EvalStatusPending, next.Status)
		require.Equal(t, triggerQueued, next.TriggeredBy)
		require.Equal(t, eval.ID, next.PreviousEval)
		require.Equal(t, int32(25-sum(sizes)), plan.EvalUpdate.QueuedAllocations["web"])
		eval = next
	}
	require.Equal(t, []int{10, 10, 5}, sizes)
	names := map[string]bool{}
	for _, a := range snap.AllocsByJob("default", "big") {
		require.False(t, names[a.Name], "placed twice: %s", a.Name)
		names[a.Name] = true
	}
	require.Len(t, names, 25)

	opts := testOpts(1) // no limit: one plan
	plan := processWith(t, newMemSnapshot(testNodes(10), job), testEval(job), opts)
	require.Len(t, plan.Place, 25)
	require.Empty(t, plan.NewEvals)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestMaxPlacementsBlocksOnce: a job with a group that cannot be placed
// gets one blocked evaluation, from the last plan of the chain, not one
// per plan.
func TestMaxPlacementsBlocksOnce(t *testing.T) {
	job := testJob("big", jobTypeService, 25)
	huge := proto.Clone(job.TaskGroups[0]).(*messages.TaskGroup)
	huge.Name, huge.Count = "huge", 1
	huge.Tasks[0].Resources.MemoryMB = 1 << 20
	job.TaskGroups = append(job.TaskGroups, huge)
	snap := newMemSnapshot(testNodes(10), job)
	eval := testEval(job)
	blocked := 0
	for range 5 {
		opts := testOpts(1)
		opts.MaxPlacements = 10
		plan := processWith(t, snap, eval, opts)
		snap.ApplyPlan(plan)
		var next *messages.Evaluation
		for _, e := range plan.NewEvals {
			switch e.Status {
			case messages.EvalStatusBlocked:
				blocked++
			case messages.EvalStatusPending:
				next = e
			}
		}
		if next == nil {
			break
		}
		eval = next
	}
	require.Equal(t, 1, blocked)
	require.Len(t, snap.AllocsByJob("default", "big"), 25)
}
