package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

const deployID = "d1d1d1d1-0000-0000-0000-000000000000"

// deploymentRoutes serves f.deployments: each GET of one moves a step
// along its sequence, then the last step repeats.
func (f *fakeAPI) deploymentRoutes(mux *http.ServeMux) {
	next := func(id string) *messages.Deployment {
		seq := f.deployments[id]
		if len(seq) == 0 {
			return nil
		}
		d := seq[0]
		if len(seq) > 1 {
			f.deployments[id] = seq[1:]
		}
		return d
	}
	mux.HandleFunc("GET /v1/deployment/{id}", get(f, func(id string) any { return next(id) }))
	mux.HandleFunc("GET /v1/deployments", get(f, func(string) any {
		out := []*messages.Deployment{}
		for _, seq := range f.deployments {
			out = append(out, seq[len(seq)-1])
		}
		return out
	}))
	mux.HandleFunc("GET /v1/job/{id}/deployment", get(f, func(id string) any {
		for _, seq := range f.deployments {
			if d := seq[len(seq)-1]; d.JobID == id {
				return d
			}
		}
		return nil
	}))
	for _, action := range []string{"promote", "fail", "pause", "unblock"} {
		mux.HandleFunc("POST /v1/deployment/"+action+"/{id}", f.write(func(id string) any {
			if f.deployments[id] == nil {
				return nil
			}
			return &api.DeploymentUpdateResponse{EvalID: f.evalID}
		}))
	}
}

func testDeploy(status, desc string, healthy int32) *messages.Deployment {
	return &messages.Deployment{ID: deployID, JobID: "web", JobVersion: 1, Status: status, StatusDescription: desc,
		TaskGroups: map[string]*messages.DeploymentState{"web": {DesiredTotal: 2, PlacedAllocs: 2, HealthyAllocs: healthy,
			AutoRevert: true, RequireProgressBy: ago(-600e9)}}}
}

// TestJobRunFollowsDeployment: `job run` follows the deployment its
// evaluation names to the end, showing its groups; success exits 0, a
// failure exits 1 with the deployment's description.
func TestJobRunFollowsDeployment(t *testing.T) {
	for _, tc := range []struct {
		name     string
		last     *messages.Deployment
		wantCode int
		want     []string
	}{
		{"successful", testDeploy("successful", messages.DeploymentDescSuccessful, 2), exitOK,
			[]string{`Monitoring deployment "d1d1d1d1"`, `✓ Deployment "d1d1d1d1" successful`,
				"Description = Deployment completed successfully", "Task Group  Auto Revert  Desired  Placed  Healthy  Unhealthy",
				"web         true         2        2       2        0"}},
		{"failed", testDeploy("failed", "Failed due to unhealthy allocations - rolling back to job version 0", 1), exitError,
			[]string{`! Deployment "d1d1d1d1" failed`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.evalID = evalID
			f.evals[evalID] = []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) { e.DeploymentID = deployID })}
			f.jobAllocs["web"] = [][]*api.AllocListStub{{allocStub("running")}}
			f.deployments = map[string][]*messages.Deployment{deployID: {
				testDeploy("running", messages.DeploymentDescRunning, 0), tc.last}}
			code, out, errOut := f.runCLI("job", "run", writeFile(t, "web.hcl", `job "web" { group "web" {} }`))
			require.Equal(t, tc.wantCode, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			for _, w := range tc.want {
				require.Contains(t, out, w)
			}
			if tc.wantCode != exitOK {
				require.Contains(t, errOut, "rolling back to job version 0")
			}
		})
	}
}

func TestDeploymentCommands(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	f.deployments = map[string][]*messages.Deployment{deployID: {testDeploy("running", messages.DeploymentDescRunning, 1)}}

	code, out, _ := f.runCLI("deployment", "list")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "ID        Job ID  Job Version  Status   Description")
	require.Contains(t, out, "d1d1d1d1  web     1            running  Deployment is running")

	code, out, _ = f.runCLI("deployment", "status", deployID)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "Status      = running")
	require.Contains(t, out, "Deployed")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"deployment", "promote", deployID}, `Deployment "d1d1d1d1" promoted`},
		{[]string{"deployment", "fail", deployID}, `Deployment "d1d1d1d1" failed`},
		{[]string{"deployment", "pause", deployID}, `Deployment "d1d1d1d1" paused`},
		{[]string{"deployment", "resume", deployID}, `Deployment "d1d1d1d1" resumed`},
		{[]string{"job", "promote", "web"}, `Deployment "d1d1d1d1" promoted`},
	} {
		code, out, errOut := f.runCLI(tc.args...)
		require.Equal(t, exitOK, code, "%v: %s", tc.args, errOut)
		require.Contains(t, out, tc.want)
	}
	require.Len(t, f.callsTo("POST", "/v1/deployment/promote/"+deployID), 2)
	pause := f.callsTo("POST", "/v1/deployment/pause/"+deployID)
	require.Len(t, pause, 2)
	require.Contains(t, pause[0].Body, `"Pause":true`)
	require.Contains(t, pause[1].Body, `"Pause":false`)

	code, _, errOut := f.runCLI("deployment", "status", "nope")
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "not found")
}

func TestJobStatusShowsLatestDeployment(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web"] = &messages.Job{ID: "web", Name: "web", Type: "service", Status: "running"}
	f.summaries["web"] = &api.JobSummary{JobID: "web", Summary: map[string]api.TaskGroupSummary{}}
	f.deployments = map[string][]*messages.Deployment{deployID: {testDeploy("running", messages.DeploymentDescRunning, 1)}}
	code, out, errOut := f.runCLI("job", "status", "web")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "Latest Deployment\nID          = d1d1d1d1\nStatus      = running\nDescription = Deployment is running")
	require.Contains(t, out, "web         true         2        2       1        0")
}
