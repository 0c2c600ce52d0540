package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

type reconcileCase struct {
	name  string
	setup func(job *messages.Job, s *MemSnapshot)
	check func(t *testing.T, s *MemSnapshot, plan *messages.ApplyPlan)
}

// addRunning adds running allocs 0..n-1 of job, one per node n00, n01...
func addRunning(s *MemSnapshot, job *messages.Job, n int) {
	for i := range n {
		s.AddAlloc(testAlloc(job, testNodes(n)[i].ID, uint32(i)))
	}
}

func failedAlloc(job *messages.Job, failedAgo time.Duration) *messages.Allocation {
	a := testAlloc(job, "n00", 0)
	a.ClientStatus = messages.AllocClientStatusFailed
	a.ModifyTime = testNow.Add(-failedAgo).UnixNano()
	return a
}

func policy(attempts int32, delay time.Duration) *messages.ReschedulePolicy {
	return &messages.ReschedulePolicy{Attempts: attempts, Interval: int64(time.Hour),
		Delay: int64(delay), DelayFunction: "constant"}
}

var reconcileCases = []reconcileCase{
	{name: "place new job",
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[0]", "web.web[1]", "web.web[2]"}, placedNames(plan))
			require.Empty(t, plan.Stop)
			require.Equal(t, messages.EvalStatusComplete, plan.EvalUpdate.Status)
			require.Equal(t, int32(0), plan.EvalUpdate.QueuedAllocations["web"])
			a := plan.Place[0]
			require.Equal(t, messages.AllocDesiredStatusRun, a.DesiredStatus)
			require.Equal(t, messages.AllocClientStatusPending, a.ClientStatus)
			require.Equal(t, "eval-1", a.EvalID)
			require.Equal(t, testNow.UnixNano(), a.CreateTime)
			require.Equal(t, int64(500), a.AllocatedResources.Tasks["server"].Cpu.CpuShares)
			require.Equal(t, int64(256), a.AllocatedResources.Tasks["server"].Memory.MemoryMB)
			require.Nil(t, a.Job)
			require.NotEmpty(t, a.NodeName)
		}},
	{name: "unchanged re-register creates nothing",
		setup: func(job *messages.Job, s *MemSnapshot) { addRunning(s, job, 3) },
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
			require.Empty(t, plan.NewEvals)
		}},
	{name: "scale up fills the lowest free indexes",
		setup: func(job *messages.Job, s *MemSnapshot) {
			s.AddAlloc(testAlloc(job, "n00", 0))
			s.AddAlloc(testAlloc(job, "n01", 2))
			job.TaskGroups[0].Count = 4
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[1]", "web.web[3]"}, placedNames(plan))
			require.Equal(t, uint32(1), plan.Place[0].Index)
		}},
	{name: "scale down stops the highest indexes",
		setup: func(job *messages.Job, s *MemSnapshot) { addRunning(s, job, 5); job.TaskGroups[0].Count = 2 },
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			stops := stopsByID(plan)
			require.Len(t, stops, 3)
			for _, id := range []string{"a-n02-2", "a-n03-3", "a-n04-4"} {
				require.Equal(t, descNotNeeded, stops[id].DesiredDescription)
				require.Equal(t, messages.AllocDesiredStatusStop, stops[id].DesiredStatus)
			}
		}},
	{name: "stopped job stops every running alloc",
		setup: func(job *messages.Job, s *MemSnapshot) {
			addRunning(s, job, 3)
			done := testAlloc(job, "n04", 4)
			done.ClientStatus = messages.AllocClientStatusComplete
			s.AddAlloc(done)
			job.Stop = true
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Len(t, plan.Stop, 3)
			require.NotContains(t, stopsByID(plan), "a-n04-4")
			require.Equal(t, messages.EvalStatusComplete, plan.EvalUpdate.Status)
		}},
	{name: "a periodic job places nothing itself",
		setup: func(job *messages.Job, s *MemSnapshot) {
			addRunning(s, job, 2) // from before it became periodic
			job.Type = "batch"
			job.Periodic = &messages.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}}
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Len(t, plan.Stop, 2)
		}},
	{name: "purged job stops every running alloc",
		setup: func(job *messages.Job, s *MemSnapshot) { addRunning(s, job, 2); s.RemoveJob("default", "web") },
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Len(t, plan.Stop, 2)
			require.Empty(t, plan.Place)
		}},
	{name: "new version replaces every alloc under the same name",
		setup: func(job *messages.Job, s *MemSnapshot) { addRunning(s, job, 3); changeTasks(job, 1) },
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[0]", "web.web[1]", "web.web[2]"}, placedNames(plan))
			stops := stopsByID(plan)
			require.Len(t, stops, 3)
			for _, a := range plan.Place {
				require.Equal(t, uint64(1), a.JobVersion)
				require.Contains(t, stops, a.PreviousAllocation)
				require.Equal(t, descUpdating, stops[a.PreviousAllocation].DesiredDescription)
			}
		}},
	{name: "batch alloc that completed is not replaced",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.Type = jobTypeBatch
			job.TaskGroups[0].Count = 2
			done := testAlloc(job, "n00", 0)
			done.ClientStatus = messages.AllocClientStatusComplete
			s.AddAlloc(done)
			s.AddAlloc(testAlloc(job, "n01", 1))
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
		}},
	{name: "service alloc that completed is replaced",
		setup: func(job *messages.Job, s *MemSnapshot) {
			addRunning(s, job, 3)
			done := testAlloc(job, "n00", 0)
			done.ClientStatus = messages.AllocClientStatusComplete
			s.AddAlloc(done)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[0]"}, placedNames(plan))
			require.Empty(t, plan.Stop)
		}},
	{name: "failed alloc due now is rescheduled",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 1
			job.TaskGroups[0].ReschedulePolicy = policy(2, 5*time.Second)
			s.AddAlloc(failedAlloc(job, time.Minute))
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[0]"}, placedNames(plan))
			a := plan.Place[0]
			require.Equal(t, "a-n00-0", a.PreviousAllocation)
			require.NotEqual(t, "n00", a.NodeID, "the node it failed on is penalised")
			require.Len(t, a.RescheduleTracker.Events, 1)
			ev := a.RescheduleTracker.Events[0]
			require.Equal(t, "a-n00-0", ev.PrevAllocID)
			require.Equal(t, "n00", ev.PrevNodeID)
			require.Equal(t, testNow.UnixNano(), ev.RescheduleTime)
			require.Equal(t, int64(5*time.Second), ev.Delay)
			require.Equal(t, descRescheduled, stopsByID(plan)["a-n00-0"].DesiredDescription)
		}},
	{name: "failed alloc due later gets a follow-up eval",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 1
			job.TaskGroups[0].ReschedulePolicy = policy(2, time.Minute)
			s.AddAlloc(failedAlloc(job, 10*time.Second))
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
			require.Len(t, plan.NewEvals, 1)
			ev := plan.NewEvals[0]
			require.Equal(t, messages.EvalStatusPending, ev.Status)
			require.Equal(t, triggerAllocFail, ev.TriggeredBy)
			require.Equal(t, testNow.Add(50*time.Second).UnixNano(), ev.WaitUntil)
			require.Equal(t, "web", ev.JobID)
			require.Empty(t, plan.EvalUpdate.BlockedEval)
		}},
	{name: "failed alloc out of attempts stays failed",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 1
			job.TaskGroups[0].ReschedulePolicy = policy(1, 0)
			a := failedAlloc(job, time.Minute)
			a.RescheduleTracker = &messages.RescheduleTracker{Events: []*messages.RescheduleEvent{
				{RescheduleTime: testNow.Add(-10 * time.Minute).UnixNano(), PrevAllocID: "x", PrevNodeID: "n01"}}}
			s.AddAlloc(a)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
			require.Empty(t, plan.NewEvals)
		}},
	{name: "failed alloc with no policy stays failed",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 1
			s.AddAlloc(failedAlloc(job, time.Minute))
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.NewEvals)
		}},
	{name: "alloc on a down node is lost and replaced",
		setup: func(job *messages.Job, s *MemSnapshot) {
			addRunning(s, job, 3)
			down := testNode("n01", 4000, 8192)
			down.Status = messages.NodeStatusDown
			s.AddNode(down)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[1]"}, placedNames(plan))
			require.NotEqual(t, "n01", plan.Place[0].NodeID)
			require.Equal(t, "a-n01-1", plan.Place[0].PreviousAllocation)
			st := stopsByID(plan)["a-n01-1"]
			require.Equal(t, messages.AllocClientStatusLost, st.ClientStatus)
			require.Equal(t, descLost, st.DesiredDescription)
		}},
	{name: "drain migrates at most max_parallel",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 4
			job.TaskGroups[0].Migrate = &messages.MigrateStrategy{MaxParallel: 2}
			for i := range 4 {
				s.AddAlloc(testAlloc(job, "n00", uint32(i)))
			}
			drain := testNode("n00", 4000, 8192)
			drain.Drain, drain.SchedulingEligibility = true, "ineligible"
			s.AddNode(drain)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[0]", "web.web[1]"}, placedNames(plan))
			require.Len(t, plan.Stop, 2)
			for _, st := range plan.Stop {
				require.Equal(t, descMigrating, st.DesiredDescription)
			}
			for _, a := range plan.Place {
				require.NotEqual(t, "n00", a.NodeID)
			}
		}},
	{name: "pending migration counts against max_parallel",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].Count = 3
			job.TaskGroups[0].Migrate = &messages.MigrateStrategy{MaxParallel: 2}
			old := testAlloc(job, "n00", 0)
			old.DesiredStatus, old.DesiredDescription = messages.AllocDesiredStatusStop, descMigrating
			s.AddAlloc(old)
			repl := testAlloc(job, "n01", 0)
			repl.ID, repl.PreviousAllocation, repl.ClientStatus = "repl", old.ID, messages.AllocClientStatusPending
			s.AddAlloc(repl)
			s.AddAlloc(testAlloc(job, "n00", 1))
			s.AddAlloc(testAlloc(job, "n00", 2))
			drain := testNode("n00", 4000, 8192)
			drain.Drain = true
			s.AddNode(drain)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[1]"}, placedNames(plan))
			require.Len(t, plan.Stop, 1)
		}},
	{name: "allocs of a removed group are stopped",
		setup: func(job *messages.Job, s *MemSnapshot) {
			addRunning(s, job, 3)
			old := testAlloc(job, "n03", 0)
			old.ID, old.TaskGroup = "old-group", "old"
			s.AddAlloc(old)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Equal(t, descNotNeeded, stopsByID(plan)["old-group"].DesiredDescription)
		}},
}

func TestReconcile(t *testing.T) {
	for _, tc := range reconcileCases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, 3)
			s := newMemSnapshot(testNodes(5), job)
			if tc.setup != nil {
				tc.setup(job, s)
			}
			plan := mustProcess(t, s, testEval(job), 1)
			require.Equal(t, "eval-1", plan.EvalID)
			tc.check(t, s, plan)
		})
	}
}

func TestReconcileAppliedPlanIsStable(t *testing.T) {
	job := testJob("web", jobTypeService, 5)
	s := newMemSnapshot(testNodes(5), job)
	first := mustProcess(t, s, testEval(job), 1)
	require.Len(t, first.Place, 5)
	s.ApplyPlan(first)
	second := mustProcess(t, s, testEval(job), 2)
	require.Empty(t, second.Place)
	require.Empty(t, second.Stop)
}
