package agent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestJobPlanThroughNomadsClient plans with Nomad's own Go client: a new
// job would place its allocations; after registering, an unchanged job
// changes nothing, a bigger count places more and a new task config
// replaces them all; planning stores nothing; a registration enforcing a
// stale job modify index is refused, the planned one goes through.
func TestJobPlanThroughNomadsClient(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	newJob := func(count int, arg string) *nomad.Job {
		job := nomad.NewServiceJob("web", "web", "global", 50)
		tg := nomad.NewTaskGroup("g", count)
		task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
			SetConfig("args", []string{"-c", arg}).Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)})
		tg.AddTask(task)
		job.AddTaskGroup(tg)
		return job
	}
	evals := func() int { return len(a.Store().Snapshot().Evals()) }

	plan, _, err := c.Jobs().Plan(newJob(2, "while true; do sleep 1; done"), true, nil)
	require.NoError(t, err)
	require.EqualValues(t, 2, plan.Annotations.DesiredTGUpdates["g"].Place)
	require.Equal(t, "Added", plan.Diff.Type)
	require.Zero(t, plan.JobModifyIndex)
	require.Empty(t, plan.FailedTGAllocs)
	require.Nil(t, a.Store().Snapshot().JobByID("default", "web"), "a plan stores nothing")
	require.Zero(t, evals())

	resp, _, err := c.Jobs().EnforceRegister(newJob(2, "while true; do sleep 1; done"), 0, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "web", "running")
	registered := a.Store().Snapshot().JobByID("default", "web").GetJobModifyIndex()
	require.Equal(t, resp.JobModifyIndex, registered)

	plan, _, err = c.Jobs().Plan(newJob(2, "while true; do sleep 1; done"), true, nil)
	require.NoError(t, err)
	require.Equal(t, registered, plan.JobModifyIndex)
	require.Equal(t, "None", plan.Diff.Type)
	require.Equal(t, &nomad.DesiredUpdates{Ignore: 2}, plan.Annotations.DesiredTGUpdates["g"])

	plan, _, err = c.Jobs().Plan(newJob(3, "while true; do sleep 1; done"), true, nil)
	require.NoError(t, err)
	require.Equal(t, &nomad.DesiredUpdates{Place: 1, InPlaceUpdate: 2}, plan.Annotations.DesiredTGUpdates["g"],
		"a bigger count keeps the running allocations (updated in place)")
	require.Equal(t, "Edited", plan.Diff.Type)
	require.Len(t, plan.Diff.TaskGroups, 1)
	require.Equal(t, "Edited", plan.Diff.TaskGroups[0].Type)
	require.Equal(t, map[string]uint64{"create": 1, "in-place update": 2}, plan.Diff.TaskGroups[0].Updates)

	before := evals()
	plan, _, err = c.Jobs().Plan(newJob(2, "sleep 1000"), true, nil)
	require.NoError(t, err)
	require.Equal(t, &nomad.DesiredUpdates{DestructiveUpdate: 2}, plan.Annotations.DesiredTGUpdates["g"])
	require.Equal(t, before, evals(), "a plan creates no evaluation")
	require.EqualValues(t, 0, a.Store().Snapshot().JobByID("default", "web").GetVersion())

	_, _, err = c.Jobs().EnforceRegister(newJob(2, "sleep 1000"), registered+100, nil)
	require.ErrorContains(t, err, "409")
	require.ErrorContains(t, err, "job modify index")
	require.EqualValues(t, 0, a.Store().Snapshot().JobByID("default", "web").GetVersion(), "refused: nothing changed")
	_, _, err = c.Jobs().EnforceRegister(newJob(2, "sleep 1000"), plan.JobModifyIndex, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, a.Store().Snapshot().JobByID("default", "web").GetVersion())

	// Bad input: a clear 400 that names the problem.
	for body, want := range map[string]string{
		`{`: "unexpected",
		`{"Job": {"ID": "other", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec"}]}]}}`: `does not match the URL's "web"`,
		`{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Count": -1}]}}`:                                  "count -1 must not be negative",
	} {
		req, err := http.NewRequest(http.MethodPut, "http://"+a.HTTPAddr()+"/v1/job/web/plan", strings.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", body, msg)
		require.Contains(t, string(msg), want)
	}
}

// TestScalingUpKeepsTheRunningTasks: registering a job again with a
// bigger count starts the new allocation and leaves the running one
// alone (updated in place to the new version, its task not restarted).
func TestScalingUpKeepsTheRunningTasks(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := func(count int) *nomad.Job { return startsJob("scale", count) }
	_, _, err = c.Jobs().Register(job(1), nil)
	require.NoError(t, err)
	first := waitAllocStatus(t, c, "scale", "running")
	starts := filepath.Join(a.AllocDir(), first.ID, "t", "local", "starts")
	require.Eventually(t, func() bool { b, _ := os.ReadFile(starts); return len(b) > 0 }, 10*time.Second, 10*time.Millisecond)

	_, _, err = c.Jobs().Register(job(2), nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		running := 0
		for _, al := range a.Store().Snapshot().AllocsByJob("default", "scale") {
			if al.GetClientStatus() == "running" && al.GetDesiredStatus() == "run" && al.GetJobVersion() == 1 {
				running++
			}
		}
		return running == 2
	}, 30*time.Second, 20*time.Millisecond, "two allocations of version 1 should run")
	kept := a.Store().Snapshot().AllocByID(first.ID)
	require.Equal(t, "run", kept.GetDesiredStatus(), "the first allocation is kept")
	require.EqualValues(t, 1, kept.GetJobVersion(), "and moved to the new version")
	requireNotRestarted(t, a, first.ID, starts)
}

// requireNotRestarted checks that allocation id, updated in place to
// version 1, runs the task it started with: no restart counted, one start
// in the starts file, and the client's own record at version 1.
func requireNotRestarted(t *testing.T, a *Agent, id, starts string) {
	t.Helper()
	require.Eventually(t, func() bool {
		sa, err := a.db.Alloc(id)
		return err == nil && sa != nil && sa.Alloc.GetJobVersion() == 1
	}, 10*time.Second, 10*time.Millisecond, "the client never took the new version")
	st := a.Store().Snapshot().AllocByID(id).GetTaskStates()["t"]
	require.Zero(t, st.GetRestarts())
	require.Equal(t, "running", st.GetState())
	b, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "\n"), "its task was not restarted: %q", b)
}

// startsJob is a service job of one group "g" whose exec task "t" appends
// its PID to $NOMAD_TASK_DIR/starts when it starts and then keeps running.
func startsJob(id string, count int) *nomad.Job {
	j := nomad.NewServiceJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", count)
	tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "echo $$ >> $NOMAD_TASK_DIR/starts; while true; do sleep 0.2; done"}).
		Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)}))
	j.AddTaskGroup(tg)
	return j
}
