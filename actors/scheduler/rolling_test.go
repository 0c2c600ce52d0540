package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// deploySnap is a MemSnapshot that stores deployments.
type deploySnap struct {
	*MemSnapshot
	deploys []*messages.Deployment
}

func (s *deploySnap) DeploymentsByJob(ns, id string) []*messages.Deployment { return s.deploys }

func rollingJob(count, maxParallel int32) *messages.Job {
	j := testJob("web", jobTypeService, count)
	j.TaskGroups[0].Update = &messages.UpdateStrategy{MaxParallel: maxParallel, HealthCheck: messages.HealthCheckTaskStates,
		MinHealthyTime: int64(time.Second), HealthyDeadline: int64(time.Minute), ProgressDeadline: int64(10 * time.Minute), Stagger: 1}
	return j
}

// rollStep plans once and commits the plan (and its new deployment).
func rollStep(t *testing.T, s *deploySnap, job *messages.Job, seed uint64) *messages.ApplyPlan {
	t.Helper()
	plan, d, err := processDeploy(s, testEval(job), testOpts(seed))
	require.NoError(t, err)
	if d != nil {
		s.deploys = append([]*messages.Deployment{d}, s.deploys...)
	}
	s.ApplyPlan(plan)
	return plan
}

func markHealthy(s *deploySnap, ids ...string) {
	for _, id := range ids {
		a := cloneAlloc(s.Alloc(id))
		h := true
		a.ClientStatus = messages.AllocClientStatusRunning
		a.DeploymentStatus = &messages.AllocDeploymentStatus{Healthy: &h}
		s.AddAlloc(a)
	}
}

// healthyNow counts the allocations that serve: old ones not stopped and
// new ones healthy.
func healthyNow(s *deploySnap, job *messages.Job) (serving, newHealthy int) {
	for _, a := range s.AllocsByJob(job.Namespace, job.ID) {
		switch {
		case a.ServerTerminalStatus() || a.ClientTerminalStatus():
		case a.JobVersion != job.Version:
			serving++
		case a.DeploymentStatus.IsHealthy():
			serving++
			newHealthy++
		}
	}
	return serving, newHealthy
}

func TestRollingUpdateMaxParallelOne(t *testing.T) {
	v0 := rollingJob(4, 1)
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(4), v0)}
	for i := range 4 {
		s.AddAlloc(testAlloc(v0, "n0"+string(rune('0'+i)), uint32(i)))
	}
	v1 := rollingJob(4, 1)
	changeTasks(v1, 1)
	s.AddJob(v1)

	plan := rollStep(t, s, v1, 1)
	require.Len(t, s.deploys, 1, "the first plan of the version creates its deployment")
	d := s.deploys[0]
	require.EqualValues(t, 4, d.TaskGroups["web"].DesiredTotal)
	require.Equal(t, d.ID, plan.EvalUpdate.DeploymentID, "the evaluation names it")
	require.Len(t, plan.Place, 1, "max_parallel = 1")
	require.Equal(t, d.ID, plan.Place[0].DeploymentID)
	require.Empty(t, plan.Stop, "nothing stops before a new allocation is healthy")

	plan = rollStep(t, s, v1, 2)
	require.Empty(t, plan.Place, "one unhealthy new allocation in flight holds the next")
	require.Empty(t, plan.Stop)

	for step := 0; step < 8; step++ {
		var fresh []string
		for _, a := range s.AllocsByJob(v1.Namespace, v1.ID) {
			if a.JobVersion == 1 && !a.DeploymentStatus.HealthSet() && !a.ServerTerminalStatus() {
				fresh = append(fresh, a.ID)
			}
		}
		if len(fresh) == 0 {
			break
		}
		markHealthy(s, fresh...)
		plan = rollStep(t, s, v1, uint64(10+step))
		serving, _ := healthyNow(s, v1)
		require.GreaterOrEqual(t, serving, 4, "step %d: an old allocation stops only for a healthy new one", step)
		require.LessOrEqual(t, len(plan.Place), 1, "step %d", step)
		require.LessOrEqual(t, len(plan.Stop), 1, "step %d", step)
	}
	serving, newHealthy := healthyNow(s, v1)
	require.Equal(t, 4, newHealthy)
	require.Equal(t, 4, serving)
	require.Len(t, s.deploys, 1, "one deployment for the version")
}

func TestRollingUpdateHeldWhenDeploymentPaused(t *testing.T) {
	v0 := rollingJob(2, 2)
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(2), v0)}
	s.AddAlloc(testAlloc(v0, "n00", 0))
	s.AddAlloc(testAlloc(v0, "n01", 1))
	v1 := rollingJob(2, 2)
	changeTasks(v1, 1)
	s.AddJob(v1)
	s.deploys = []*messages.Deployment{{ID: "d", JobID: "web", Namespace: "default", JobVersion: 1,
		Status: messages.DeploymentStatusPaused, TaskGroups: map[string]*messages.DeploymentState{"web": {DesiredTotal: 2}}}}
	plan := rollStep(t, s, v1, 1)
	require.Empty(t, plan.Place)
	require.Empty(t, plan.Stop)
	s.deploys[0].Status = messages.DeploymentStatusRunning
	plan = rollStep(t, s, v1, 2)
	require.Len(t, plan.Place, 2, "max_parallel = 2 once resumed")
	require.Equal(t, "d", plan.Place[0].DeploymentID)
}

func TestNewRollingJobPlacesAllWithDeployment(t *testing.T) {
	v0 := rollingJob(3, 1)
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(3), v0)}
	plan := rollStep(t, s, v0, 1)
	require.Len(t, plan.Place, 3, "a first version is not held by max_parallel")
	require.Len(t, s.deploys, 1)
	for _, a := range plan.Place {
		require.Equal(t, s.deploys[0].ID, a.DeploymentID)
	}
}

func TestBatchJobHasNoDeployment(t *testing.T) {
	j := testJob("b", jobTypeBatch, 2)
	j.TaskGroups[0].Update = &messages.UpdateStrategy{MaxParallel: 1}
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(2), j)}
	plan := rollStep(t, s, j, 1)
	require.Len(t, plan.Place, 2)
	require.Empty(t, s.deploys)
	require.Empty(t, plan.Place[0].DeploymentID)
}

func TestCanaryThenPromote(t *testing.T) {
	v0 := rollingJob(3, 1)
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(3), v0)}
	for i := range 3 {
		s.AddAlloc(testAlloc(v0, "n0"+string(rune('0'+i)), uint32(i)))
	}
	v1 := rollingJob(3, 1)
	v1.TaskGroups[0].Update.Canary = 1
	changeTasks(v1, 1)
	s.AddJob(v1)

	plan := rollStep(t, s, v1, 1)
	require.Len(t, plan.Place, 1)
	require.True(t, plan.Place[0].DeploymentStatus.IsCanary())
	require.Empty(t, plan.Stop, "a canary runs beside the old allocations")
	d := s.deploys[0]
	require.EqualValues(t, 1, d.TaskGroups["web"].DesiredCanaries)
	canary := plan.Place[0].ID

	markHealthy(s, canary)
	a := cloneAlloc(s.Alloc(canary))
	a.DeploymentStatus.Canary = true
	s.AddAlloc(a)
	plan = rollStep(t, s, v1, 2)
	require.Empty(t, plan.Place, "nothing else moves until promoted")
	require.Empty(t, plan.Stop)

	d.TaskGroups["web"].Promoted = true
	plan = rollStep(t, s, v1, 3)
	require.Len(t, plan.Stop, 1, "the canary's old sibling stops once promoted")
	require.Equal(t, s.Alloc(plan.Stop[0].AllocID).Index, s.Alloc(canary).Index)
	require.Len(t, plan.Place, 1, "and the rollout goes on, max_parallel at a time")
	require.False(t, plan.Place[0].DeploymentStatus.IsCanary())
}

// TestMultiregionDeploymentWaitsItsTurn: a multiregion job's first plan
// makes its deployment pending (carrying the rollout) and places nothing;
// once the rollout starts it (running), the next plan places the group.
func TestMultiregionDeploymentWaitsItsTurn(t *testing.T) {
	job := rollingJob(2, 1)
	job.Multiregion = &messages.Multiregion{Regions: []*messages.MultiregionRegion{{Name: "a"}, {Name: "b"}}}
	job.MultiregionRollout = "r1"
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(2), job)}

	plan := rollStep(t, s, job, 1)
	require.Len(t, s.deploys, 1, "the deployment is made while nothing is placed")
	d := s.deploys[0]
	require.Equal(t, messages.DeploymentStatusPending, d.Status)
	require.True(t, d.IsMultiregion)
	require.Equal(t, "r1", d.MultiregionRollout)
	require.Empty(t, plan.Place, "a pending multiregion deployment places nothing")

	d.Status = messages.DeploymentStatusRunning
	plan = rollStep(t, s, job, 2)
	require.Len(t, s.deploys, 1, "the same deployment")
	require.Len(t, plan.Place, 2, "its turn: the group is placed")
	require.Equal(t, d.ID, plan.Place[0].DeploymentID)
}

// TestMultiregionRevertDeploysAlone: a multiregion job version without a
// rollout (a revert registered in one region) gets a running deployment of
// its region alone, and places at once.
func TestMultiregionRevertDeploysAlone(t *testing.T) {
	job := rollingJob(2, 1)
	job.Multiregion = &messages.Multiregion{Regions: []*messages.MultiregionRegion{{Name: "a"}, {Name: "b"}}}
	s := &deploySnap{MemSnapshot: newMemSnapshot(testNodes(2), job)}

	plan := rollStep(t, s, job, 1)
	require.Len(t, s.deploys, 1)
	d := s.deploys[0]
	require.Equal(t, messages.DeploymentStatusRunning, d.Status)
	require.False(t, d.IsMultiregion, "no rollout to coordinate with peers")
	require.NotEmpty(t, plan.Place, "a revert does not wait for a turn")
}
