package state

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func testDeployment(id string, j *messages.Job, canaries int32) *messages.Deployment {
	return &messages.Deployment{ID: id, Namespace: "default", JobID: j.ID, JobVersion: j.Version,
		JobCreateIndex: j.CreateIndex, Status: messages.DeploymentStatusRunning,
		StatusDescription: messages.DeploymentDescRunning,
		TaskGroups: map[string]*messages.DeploymentState{"web": {DesiredTotal: 2, DesiredCanaries: canaries,
			ProgressDeadline: 600e9, AutoRevert: true}}}
}

func deployCmd(c any) *messages.Command {
	switch c := c.(type) {
	case *messages.UpsertDeployment:
		return &messages.Command{Cmd: &messages.Command_UpsertDeployment{UpsertDeployment: c}}
	case *messages.SetAllocHealth:
		return &messages.Command{Cmd: &messages.Command_SetAllocHealth{SetAllocHealth: c}}
	case *messages.PromoteDeployment:
		return &messages.Command{Cmd: &messages.Command_PromoteDeployment{PromoteDeployment: c}}
	case *messages.UpdateDeploymentStatus:
		return &messages.Command{Cmd: &messages.Command_UpdateDeploymentStatus{UpdateDeploymentStatus: c}}
	case *messages.SetJobStable:
		return &messages.Command{Cmd: &messages.Command_SetJobStable{SetJobStable: c}}
	}
	panic("unknown")
}

// deployedHarness: job web v0 registered, deployment d1 for it, two
// allocations placed in it (a1 a canary when canaries > 0).
func deployedHarness(t *testing.T, canaries int32) *harness {
	h := newHarness(t)
	require.Nil(t, h.apply(registerNode(testNode("n1", 4000, 4000))))
	_, ok := h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", messages.EvalStatusPending))).(*RegisterJobResult)
	require.True(t, ok)
	j := h.snap().JobByID("default", "web")
	require.Nil(t, h.apply(deployCmd(&messages.UpsertDeployment{Deployment: testDeployment("d1", j, canaries)})))
	var place []*messages.Allocation
	for i, id := range []string{"a1", "a2"} {
		a := testAlloc(id, "web", "n1", "e1", 10, 10)
		a.DeploymentID = "d1"
		if i == 0 && canaries > 0 {
			a.DeploymentStatus = &messages.AllocDeploymentStatus{Canary: true}
		}
		place = append(place, a)
	}
	h.apply(plan(&messages.ApplyPlan{EvalID: "e1", Place: place}))
	return h
}

func TestDeploymentCountsPlacedAndHealth(t *testing.T) {
	h := deployedHarness(t, 1)
	s := h.snap().DeploymentByID("d1").TaskGroups["web"]
	require.EqualValues(t, 2, s.PlacedAllocs)
	require.Equal(t, []string{"a1"}, s.PlacedCanaries)

	// A client reports a1 healthy; a later report does not change it.
	healthy, unhealthy := true, false
	upd := &messages.Allocation{ID: "a1", ClientStatus: messages.AllocClientStatusRunning,
		DeploymentStatus: &messages.AllocDeploymentStatus{Healthy: &healthy, Timestamp: testNow}}
	require.Nil(t, h.apply(clientUpdate(upd)))
	upd2 := &messages.Allocation{ID: "a1", ClientStatus: messages.AllocClientStatusRunning,
		DeploymentStatus: &messages.AllocDeploymentStatus{Healthy: &unhealthy}}
	require.Nil(t, h.apply(clientUpdate(upd2)))
	// a2 fails on its client before its health was decided: unhealthy.
	require.Nil(t, h.apply(clientUpdate(&messages.Allocation{ID: "a2", ClientStatus: messages.AllocClientStatusFailed})))
	d := h.snap().DeploymentByID("d1")
	s = d.TaskGroups["web"]
	require.EqualValues(t, 1, s.HealthyAllocs)
	require.EqualValues(t, 1, s.UnhealthyAllocs)
	require.Equal(t, testNow+600e9, s.RequireProgressBy)
	require.True(t, h.snap().AllocByID("a1").DeploymentStatus.IsHealthy())
	require.True(t, h.snap().AllocByID("a2").DeploymentStatus.IsUnhealthy())
	require.Contains(t, h.lastEvent().DeploymentsChanged, "d1")
}

func TestDeploymentPromote(t *testing.T) {
	h := deployedHarness(t, 1)
	err, _ := h.apply(deployCmd(&messages.PromoteDeployment{DeploymentID: "d1", All: true})).(error)
	require.ErrorIs(t, err, ErrDeploymentPromote, "the canary is not healthy yet")
	require.Contains(t, err.Error(), `task group "web" has 0/1 healthy allocations`)
	require.Nil(t, h.apply(deployCmd(&messages.SetAllocHealth{DeploymentID: "d1", HealthyAllocationIDs: []string{"a1"}})))
	require.Nil(t, h.apply(deployCmd(&messages.PromoteDeployment{DeploymentID: "d1", All: true,
		Eval: testEval("e2", "web", messages.EvalStatusPending)})))
	require.True(t, h.snap().DeploymentByID("d1").TaskGroups["web"].Promoted)
	require.NotNil(t, h.snap().EvalByID("e2"))
	err, _ = h.apply(deployCmd(&messages.PromoteDeployment{DeploymentID: "d1", All: true})).(error)
	require.ErrorIs(t, err, ErrDeploymentPromote, "nothing left to promote")
}

func TestDeploymentAllocHealthRefusals(t *testing.T) {
	h := deployedHarness(t, 0)
	err, _ := h.apply(deployCmd(&messages.SetAllocHealth{DeploymentID: "d1", HealthyAllocationIDs: []string{"a1", "nope"}})).(error)
	require.ErrorIs(t, err, ErrDeploymentBadAlloc)
	require.False(t, h.snap().AllocByID("a1").DeploymentStatus.HealthSet(), "a refused command changes nothing")
	err, _ = h.apply(deployCmd(&messages.SetAllocHealth{DeploymentID: "zz"})).(error)
	require.ErrorIs(t, err, ErrDeploymentNotFound)
}

func TestDeploymentSuccessMakesVersionStable(t *testing.T) {
	h := deployedHarness(t, 0)
	require.Nil(t, h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1",
		Status: messages.DeploymentStatusSuccessful, StatusDescription: messages.DeploymentDescSuccessful})))
	require.True(t, h.snap().JobByID("default", "web").Stable)
	require.True(t, h.snap().JobVersion("default", "web", 0).Stable)
	err, _ := h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1", Status: messages.DeploymentStatusPaused})).(error)
	require.ErrorIs(t, err, ErrDeploymentNotActive)

	require.Nil(t, h.apply(deployCmd(&messages.SetJobStable{Namespace: "default", JobID: "web", Version: 0, Stable: false})))
	require.False(t, h.snap().JobByID("default", "web").Stable)
	err, _ = h.apply(deployCmd(&messages.SetJobStable{Namespace: "default", JobID: "web", Version: 9, Stable: true})).(error)
	require.ErrorIs(t, err, ErrJobVersionNotFound)
}

func TestNewerJobVersionCancelsDeployment(t *testing.T) {
	h := deployedHarness(t, 0)
	j := testJob("web", 10, 10)
	j.TaskGroups[0].Count = 3
	h.apply(registerJob(j, testEval("e2", "web", messages.EvalStatusPending)))
	d := h.snap().DeploymentByID("d1")
	require.Equal(t, messages.DeploymentStatusCancelled, d.Status)
	require.Equal(t, messages.DeploymentDescNewerJob, d.StatusDescription)
	require.Nil(t, h.snap().ActiveDeployment("default", "web"))
}

func TestFailWithRevertRegistersStableVersion(t *testing.T) {
	h := deployedHarness(t, 0)
	require.Nil(t, h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1",
		Status: messages.DeploymentStatusSuccessful})))
	j := testJob("web", 10, 10)
	j.TaskGroups[0].Count = 3
	h.apply(registerJob(j, testEval("e2", "web", messages.EvalStatusPending)))
	v1 := h.snap().JobByID("default", "web")
	require.EqualValues(t, 1, v1.Version)
	require.Nil(t, h.apply(deployCmd(&messages.UpsertDeployment{Deployment: testDeployment("d2", v1, 0)})))
	stable := h.snap().LatestStableVersion("default", "web", v1.Version)
	require.NotNil(t, stable)
	revert := copyJob(stable)
	require.Nil(t, h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d2",
		Status: messages.DeploymentStatusFailed, StatusDescription: messages.DeploymentDescRollback(messages.DeploymentDescFailedAllocations, 0),
		Job: revert, Eval: testEval("e3", "web", messages.EvalStatusPending)})))
	cur := h.snap().JobByID("default", "web")
	require.EqualValues(t, 2, cur.Version, "the revert is a new version")
	require.EqualValues(t, 1, cur.TaskGroups[0].Count, "with the stable version's spec")
	require.Equal(t, messages.DeploymentStatusFailed, h.snap().DeploymentByID("d2").Status)
	require.NotNil(t, h.snap().EvalByID("e3"))
}

func TestDeploymentsSnapshotRoundTrip(t *testing.T) {
	h := deployedHarness(t, 1)
	sink := persist(t, h.fsm)
	restored := NewFSM(NewStore(), nil)
	require.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	d := restored.Store().Snapshot().DeploymentByID("d1")
	require.NotNil(t, d)
	require.EqualValues(t, 2, d.TaskGroups["web"].PlacedAllocs)
}

func TestStoppingJobCancelsDeployment(t *testing.T) {
	h := deployedHarness(t, 0)
	h.apply(deregister("web", false, testEval("e9", "web", messages.EvalStatusPending)))
	d := h.snap().DeploymentByID("d1")
	require.Equal(t, messages.DeploymentStatusCancelled, d.Status)
	require.Equal(t, messages.DeploymentDescStoppedJob, d.StatusDescription)
}

// TestMultiregionDeploymentTurns: a pending multiregion deployment that
// starts counts its progress deadline from then (it may have waited
// longer than the deadline); a blocked one is active and not yet stable,
// and its unblock (successful) makes the version stable.
func TestMultiregionDeploymentTurns(t *testing.T) {
	h := newHarness(t)
	_, ok := h.apply(registerJob(testJob("web", 10, 10), testEval("e1", "web", messages.EvalStatusPending))).(*RegisterJobResult)
	require.True(t, ok)
	d := testDeployment("d1", h.snap().JobByID("default", "web"), 0)
	d.Status, d.StatusDescription, d.IsMultiregion = messages.DeploymentStatusPending, messages.DeploymentDescPending, true
	d.TaskGroups["web"].RequireProgressBy = testNow + 600e9
	require.Nil(t, h.apply(deployCmd(&messages.UpsertDeployment{Deployment: d})))

	later := testNow + 3600e9
	start := deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1", Status: messages.DeploymentStatusRunning,
		StatusDescription: messages.DeploymentDescRunning})
	start.Time = later
	require.Nil(t, h.apply(start))
	got := h.snap().DeploymentByID("d1")
	require.Equal(t, messages.DeploymentStatusRunning, got.Status)
	require.Equal(t, later+600e9, got.TaskGroups["web"].RequireProgressBy, "the deadline counts from the start")

	require.Nil(t, h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1", Status: messages.DeploymentStatusBlocked,
		StatusDescription: messages.DeploymentDescBlocked})))
	got = h.snap().DeploymentByID("d1")
	require.Equal(t, messages.DeploymentStatusBlocked, got.Status)
	require.True(t, got.Active())
	require.False(t, h.snap().JobByID("default", "web").Stable, "blocked is not done yet")
	require.Nil(t, h.apply(deployCmd(&messages.UpdateDeploymentStatus{DeploymentID: "d1", Status: messages.DeploymentStatusSuccessful,
		StatusDescription: messages.DeploymentDescSuccessful})))
	require.True(t, h.snap().JobByID("default", "web").Stable)
}
