package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobdiff"
	"github.com/troupe-dev/troupe/messages"
)

func TestJobPlan(t *testing.T) {
	f := newFakeAPI(t)
	file := writeFile(t, "web.hcl", `job "web" {}`)
	f.plan = &api.JobPlanResponse{
		JobModifyIndex: 42,
		Diff: &jobdiff.JobDiff{Type: "Edited", ID: "web", TaskGroups: []*jobdiff.TaskGroupDiff{{
			Type: "Edited", Name: "g", Updates: map[string]uint64{"create": 1, "in-place update": 2},
			Fields: []*jobdiff.FieldDiff{{Type: "Edited", Name: "Count", Old: "2", New: "3"}}}}},
		Annotations: &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{"g": {Place: 1, InPlaceUpdate: 2}}},
	}
	code, out, errOut := f.runCLI("job", "plan", file)
	require.Equal(t, exitPlanChanges, code, errOut)
	require.Contains(t, out, `+/- Job: "web"`)
	require.Contains(t, out, `Task Group: "g" (1 create, 2 in-place update)`)
	require.Contains(t, out, `Count: "2" => "3"`)
	require.Contains(t, out, "- All tasks successfully allocated.")
	require.Contains(t, out, "Job Modify Index: 42")
	require.Contains(t, out, "troupe job run -check-index 42 "+file)
	calls := f.callsTo("PUT", "/v1/job/web/plan")
	require.Len(t, calls, 1)
	var req api.JobPlanRequest
	require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &req))
	require.True(t, req.Diff)
	require.Equal(t, "web", req.Job.GetID(), calls[0].Body)

	// Nothing would change: exit 0; -diff=false asks for no diff.
	f.plan = &api.JobPlanResponse{JobModifyIndex: 42,
		Annotations: &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{"g": {Ignore: 3}}}}
	code, out, _ = f.runCLI("job", "plan", "-diff=false", file)
	require.Equal(t, exitPlanNoChange, code)
	require.NotContains(t, out, "Job:")
	require.NoError(t, json.Unmarshal([]byte(f.callsTo("PUT", "/v1/job/web/plan")[1].Body), &req))
	require.False(t, req.Diff)

	// Placement failures are explained.
	f.plan = &api.JobPlanResponse{
		Annotations:    &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{"g": {}}},
		FailedTGAllocs: map[string]*messages.AllocMetric{"g": {NodesEvaluated: 3, NodesExhausted: 3, DimensionExhausted: map[string]int32{"memory": 3}}},
	}
	code, out, _ = f.runCLI("job", "plan", file)
	require.Equal(t, exitPlanNoChange, code)
	require.Contains(t, out, "- WARNING: Failed to place all allocations.")
	require.Contains(t, out, `Task Group "g" (failed to place 1 allocation)`)
	require.Contains(t, out, "Resources exhausted on 3 nodes")

	// An agent that refuses: exit 255 with the reason.
	f.plan = nil
	code, _, errOut = f.runCLI("job", "plan", file)
	require.Equal(t, exitPlanError, code)
	require.Contains(t, errOut, "Error during plan")
}

func TestJobRunCheckIndex(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	file := writeFile(t, "web.hcl", `job "web" {}`)
	code, _, errOut := f.runCLI("job", "run", "-detach", "-check-index", "42", file)
	require.Equal(t, 0, code, errOut)
	calls := f.callsTo("PUT", "/v1/jobs")
	require.Len(t, calls, 1)
	var req api.JobRegisterRequest
	require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &req))
	require.True(t, req.EnforceIndex, calls[0].Body)
	require.EqualValues(t, 42, req.JobModifyIndex)

	code, _, _ = f.runCLI("job", "run", "-detach", file)
	require.Equal(t, 0, code)
	req = api.JobRegisterRequest{}
	require.NoError(t, json.Unmarshal([]byte(f.callsTo("PUT", "/v1/jobs")[1].Body), &req))
	require.False(t, req.EnforceIndex, "without -check-index nothing is enforced")
}
