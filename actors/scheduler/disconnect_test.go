package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// withDisconnect gives the job's group a one-hour disconnect window.
func withDisconnect(job *messages.Job, replace bool, mode string) {
	job.TaskGroups[0].Disconnect = &messages.DisconnectStrategy{
		LostAfter: int64(time.Hour), Replace: replace, Reconcile: mode}
}

func setNodeStatus(s *MemSnapshot, id, status string) {
	n := cloneNode(s.NodeByID(id))
	n.Status = status
	s.AddNode(n)
}

func setEligibility(s *MemSnapshot, id, eligibility string) {
	n := cloneNode(s.NodeByID(id))
	n.SchedulingEligibility = eligibility
	s.AddNode(n)
}

func cloneNode(n *messages.Node) *messages.Node { return proto.Clone(n).(*messages.Node) }

// started sets when a's task started, ago before testNow.
func started(a *messages.Allocation, ago time.Duration) *messages.Allocation {
	a.TaskStates = map[string]*messages.TaskState{"server": {State: "running",
		StartedAt: testNow.Add(-ago).Format(time.RFC3339)}}
	return a
}

// addDisconnected adds the running allocs 0..2 on n00..n02 and cuts node
// off: disconnected, its alloc of index idx unknown (as the leader marks it).
func addDisconnected(s *MemSnapshot, job *messages.Job, node string, idx uint32) *messages.Allocation {
	addRunning(s, job, 3)
	a := testAlloc(job, node, idx)
	a.ClientStatus = messages.AllocClientStatusUnknown
	s.AddAlloc(a)
	setNodeStatus(s, node, messages.NodeStatusDisconnected)
	return a
}

// addReplacement adds a running replacement of prev on node.
func addReplacement(s *MemSnapshot, job *messages.Job, prev *messages.Allocation, node string) *messages.Allocation {
	r := testAlloc(job, node, prev.Index)
	r.ID, r.PreviousAllocation = "repl-"+prev.ID, prev.ID
	s.AddAlloc(r)
	return r
}

// reconnectCase: a-n01-1 was cut off and replaced by repl-a-n01-1 on n03;
// n01 is back and its client reports the alloc running again. The original
// started origAgo before now, the replacement replAgo.
func reconnectSetup(mode string, origAgo, replAgo time.Duration) func(*messages.Job, *MemSnapshot) {
	return func(job *messages.Job, s *MemSnapshot) {
		withDisconnect(job, true, mode)
		addRunning(s, job, 3)
		orig := started(testAlloc(job, "n01", 1), origAgo)
		s.AddAlloc(orig)
		repl := addReplacement(s, job, orig, "n03")
		s.AddAlloc(started(cloneAlloc(repl), replAgo))
	}
}

func keeps(survivor, stopped string) func(*testing.T, *MemSnapshot, *messages.ApplyPlan) {
	return func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
		require.Empty(t, plan.Place)
		stops := stopsByID(plan)
		require.Len(t, stops, 1)
		require.NotContains(t, stops, survivor)
		require.Equal(t, descReconnected, stops[stopped].DesiredDescription)
		require.Equal(t, messages.AllocDesiredStatusStop, stops[stopped].DesiredStatus)
		require.Empty(t, stops[stopped].ClientStatus)
	}
}

var disconnectCases = []reconcileCase{
	{name: "unknown alloc with replace gets one replacement and is not stopped",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			addDisconnected(s, job, "n01", 1)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Stop)
			require.Equal(t, []string{"web.web[1]"}, placedNames(plan))
			r := plan.Place[0]
			require.Equal(t, uint32(1), r.Index)
			require.Equal(t, "a-n01-1", r.PreviousAllocation)
			require.NotEqual(t, "n01", r.NodeID)
			require.Equal(t, int32(0), plan.EvalUpdate.QueuedAllocations["web"])
		}},
	{name: "alloc on a disconnected node not yet marked unknown is replaced",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			addRunning(s, job, 3)
			setNodeStatus(s, "n02", messages.NodeStatusDisconnected)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Stop)
			require.Equal(t, []string{"web.web[2]"}, placedNames(plan))
			require.Equal(t, "a-n02-2", plan.Place[0].PreviousAllocation)
		}},
	{name: "stop_after_client_disconnect replaces like a window with replace",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.TaskGroups[0].StopAfterClientDisconnect = int64(time.Minute)
			addDisconnected(s, job, "n01", 1)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Stop)
			require.Equal(t, []string{"web.web[1]"}, placedNames(plan))
			require.Equal(t, "a-n01-1", plan.Place[0].PreviousAllocation)
		}},
	{name: "unknown alloc without replace is kept and nothing is placed",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, false, "")
			addDisconnected(s, job, "n01", 1)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
			require.Empty(t, plan.EvalUpdate.FailedTGAllocs)
		}},
	{name: "unknown alloc is not updated to a new job version",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, false, "")
			addDisconnected(s, job, "n01", 1)
			job.Version = 1
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[0]", "web.web[2]"}, placedNames(plan))
			require.NotContains(t, stopsByID(plan), "a-n01-1")
		}},
	{name: "replacement is placed once even after it was updated",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			orig := addDisconnected(s, job, "n01", 1)
			repl := addReplacement(s, job, orig, "n03")
			repl = cloneAlloc(repl)
			repl.DesiredStatus, repl.DesiredDescription = messages.AllocDesiredStatusStop, descUpdating
			s.AddAlloc(repl)
			addReplacement(s, job, repl, "n04")
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
		}},
	{name: "reconnected but not yet re-reported: nothing changes",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			orig := addDisconnected(s, job, "n01", 1)
			addReplacement(s, job, orig, "n03")
			setNodeStatus(s, "n01", messages.NodeStatusReady)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
		}},
	{name: "reconnect keep_original stops the replacement, even on an ineligible node",
		setup: func(job *messages.Job, s *MemSnapshot) {
			reconnectSetup(reconcileKeepOriginal, time.Minute, 2*time.Hour)(job, s)
			setEligibility(s, "n01", "ineligible")
		},
		check: keeps("a-n01-1", "repl-a-n01-1")},
	{name: "reconnect keep_replacement stops the original",
		setup: reconnectSetup(reconcileKeepReplacement, 2*time.Hour, time.Minute),
		check: keeps("repl-a-n01-1", "a-n01-1")},
	{name: "reconnect longest_running keeps the original that started first",
		setup: reconnectSetup(reconcileLongestRunning, 2*time.Hour, time.Minute),
		check: keeps("a-n01-1", "repl-a-n01-1")},
	{name: "reconnect longest_running keeps the replacement that started first",
		setup: reconnectSetup(reconcileLongestRunning, time.Minute, 2*time.Hour),
		check: keeps("repl-a-n01-1", "a-n01-1")},
	{name: "reconnect best_score keeps the original on a feasible node",
		setup: reconnectSetup(reconcileBestScore, time.Minute, 2*time.Hour),
		check: keeps("a-n01-1", "repl-a-n01-1")},
	{name: "reconnect default reconcile is best_score",
		setup: reconnectSetup("", time.Minute, 2*time.Hour),
		check: keeps("a-n01-1", "repl-a-n01-1")},
	{name: "reconnect best_score keeps the replacement when the original's node is ineligible",
		setup: func(job *messages.Job, s *MemSnapshot) {
			reconnectSetup(reconcileBestScore, 2*time.Hour, time.Minute)(job, s)
			setEligibility(s, "n01", "ineligible")
		},
		check: keeps("repl-a-n01-1", "a-n01-1")},
	{name: "reconnect best_score keeps the replacement when the original's node fails a constraint",
		setup: func(job *messages.Job, s *MemSnapshot) {
			reconnectSetup(reconcileBestScore, 2*time.Hour, time.Minute)(job, s)
			job.Constraints = []*messages.Constraint{{LTarget: "${node.unique.name}", Operand: "!=", RTarget: "name-n01"}}
		},
		check: keeps("repl-a-n01-1", "a-n01-1")},
	{name: "original that failed while cut off is stopped, not rescheduled",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, reconcileKeepOriginal)
			job.TaskGroups[0].ReschedulePolicy = policy(3, 0)
			addRunning(s, job, 3)
			orig := testAlloc(job, "n01", 1)
			orig.ClientStatus = messages.AllocClientStatusFailed
			s.AddAlloc(orig)
			addReplacement(s, job, orig, "n03")
		},
		check: keeps("repl-a-n01-1", "a-n01-1")},
	{name: "node down with a replacement: original lost, nothing placed",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			orig := addDisconnected(s, job, "n01", 1)
			addReplacement(s, job, orig, "n03")
			setNodeStatus(s, "n01", messages.NodeStatusDown)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			stops := stopsByID(plan)
			require.Len(t, stops, 1)
			require.Equal(t, messages.AllocClientStatusLost, stops["a-n01-1"].ClientStatus)
			require.Equal(t, descLost, stops["a-n01-1"].DesiredDescription)
		}},
	{name: "original already marked lost with a replacement: stopped, nothing placed",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			orig := addDisconnected(s, job, "n01", 1)
			addReplacement(s, job, orig, "n03")
			setNodeStatus(s, "n01", messages.NodeStatusDown)
			lost := cloneAlloc(orig)
			lost.ClientStatus = messages.AllocClientStatusLost
			s.AddAlloc(lost)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Len(t, plan.Stop, 1)
			require.Equal(t, messages.AllocClientStatusLost, stopsByID(plan)["a-n01-1"].ClientStatus)
		}},
	{name: "node down without a replacement: lost and replaced",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, false, "")
			addDisconnected(s, job, "n01", 1)
			setNodeStatus(s, "n01", messages.NodeStatusDown)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Equal(t, []string{"web.web[1]"}, placedNames(plan))
			require.Equal(t, messages.AllocClientStatusLost, stopsByID(plan)["a-n01-1"].ClientStatus)
		}},
	{name: "scale down keeps a low-index unknown pair and stops the highest index",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			orig := addDisconnected(s, job, "n00", 0)
			addReplacement(s, job, orig, "n03")
			job.TaskGroups[0].Count = 2
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			stops := stopsByID(plan)
			require.Len(t, stops, 1)
			require.Equal(t, descNotNeeded, stops["a-n02-2"].DesiredDescription)
		}},
	{name: "scale down of an unknown pair's index stops both of the pair",
		setup: func(job *messages.Job, s *MemSnapshot) {
			withDisconnect(job, true, "")
			orig := addDisconnected(s, job, "n02", 2)
			addReplacement(s, job, orig, "n03")
			job.TaskGroups[0].Count = 2
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			stops := stopsByID(plan)
			require.Len(t, stops, 2)
			require.Equal(t, descNotNeeded, stops["a-n02-2"].DesiredDescription)
			require.Equal(t, descNotNeeded, stops["repl-a-n02-2"].DesiredDescription)
			require.Empty(t, stops["a-n02-2"].ClientStatus)
		}},
	{name: "system job keeps allocs on a node in its window",
		setup: func(job *messages.Job, s *MemSnapshot) {
			job.Type = jobTypeSystem
			job.TaskGroups[0].StopAfterClientDisconnect = int64(time.Minute)
			for i, n := range testNodes(5) {
				s.AddAlloc(testAlloc(job, n.ID, uint32(i)))
			}
			setNodeStatus(s, "n01", messages.NodeStatusDisconnected)
		},
		check: func(t *testing.T, _ *MemSnapshot, plan *messages.ApplyPlan) {
			require.Empty(t, plan.Place)
			require.Empty(t, plan.Stop)
		}},
}

func TestDisconnect(t *testing.T) {
	for _, tc := range disconnectCases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("web", jobTypeService, 3)
			s := newMemSnapshot(testNodes(5), job)
			tc.setup(job, s)
			plan := mustProcess(t, s, testEval(job), 1)
			tc.check(t, s, plan)

			// Once applied, the plan is final: planning again changes nothing.
			s.ApplyPlan(plan)
			requireNoReachableDuplicates(t, s, job)
			again := mustProcess(t, s, testEval(job), 2)
			require.Empty(t, again.Place)
			require.Empty(t, again.Stop)
		})
	}
}

// requireNoReachableDuplicates: each name has at most one alloc that the
// server wants running and can reach (cut-off ones wait to reconnect).
func requireNoReachableDuplicates(t *testing.T, s *MemSnapshot, job *messages.Job) {
	t.Helper()
	byName := map[string][]string{}
	for _, a := range s.AllocsByJob(job.Namespace, job.ID) {
		n := s.NodeByID(a.NodeID)
		if a.TerminalStatus() || a.ClientStatus == messages.AllocClientStatusUnknown || n.Status != messages.NodeStatusReady {
			continue
		}
		byName[a.Name] = append(byName[a.Name], a.ID)
		require.Len(t, byName[a.Name], 1, "duplicates of %s: %v", a.Name, byName[a.Name])
	}
}

func TestDisconnectReplacementSurvivesReconnectOnce(t *testing.T) {
	job := testJob("web", jobTypeService, 3)
	withDisconnect(job, true, reconcileKeepOriginal)
	s := newMemSnapshot(testNodes(5), job)
	orig := addDisconnected(s, job, "n01", 1)

	plan := mustProcess(t, s, testEval(job), 1)
	require.Len(t, plan.Place, 1)
	s.ApplyPlan(plan)
	repl := plan.Place[0]

	// The node comes back and its client reports the original running.
	setNodeStatus(s, "n01", messages.NodeStatusReady)
	back := cloneAlloc(orig)
	back.ClientStatus = messages.AllocClientStatusRunning
	s.AddAlloc(back)
	plan = mustProcess(t, s, testEval(job), 2)
	require.Empty(t, plan.Place)
	require.Len(t, plan.Stop, 1)
	require.Equal(t, repl.ID, plan.Stop[0].AllocID)
	require.Equal(t, descReconnected, plan.Stop[0].DesiredDescription)
	s.ApplyPlan(plan)

	live := 0
	for _, a := range s.AllocsByJob(job.Namespace, job.ID) {
		if !a.TerminalStatus() {
			live++
		}
	}
	require.Equal(t, 3, live)
	again := mustProcess(t, s, testEval(job), 3)
	require.Empty(t, again.Place)
	require.Empty(t, again.Stop)
}
