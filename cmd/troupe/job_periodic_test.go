package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

func TestJobPeriodicForce(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	f.jobs["nightly"] = &messages.Job{ID: "nightly", Type: "batch",
		Periodic: &messages.PeriodicConfig{Enabled: true, Specs: []string{"@daily"}}}
	code, out, errOut := f.runCLI("job", "periodic", "force", "-detach", "nightly")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Periodic launch successful")
	require.Contains(t, out, "Evaluation ID: "+evalID)
	require.Len(t, f.callsTo("POST", "/v1/job/nightly/periodic/force"), 1)

	code, _, errOut = f.runCLI("job", "periodic", "force")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "JOB")
}

func TestJobStatusPeriodic(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["nightly"] = &messages.Job{ID: "nightly", Type: "batch", Status: "running",
		Periodic: &messages.PeriodicConfig{Enabled: true, Specs: []string{"0 3 * * *"}, TimeZone: "UTC", ProhibitOverlap: true}}
	f.jobs["nightly/periodic-1700000000"] = &messages.Job{ID: "nightly/periodic-1700000000", ParentID: "nightly",
		Type: "batch", Status: "dead", SubmitTime: 1700000000e9}
	f.jobs["nightly/periodic-1700086400"] = &messages.Job{ID: "nightly/periodic-1700086400", ParentID: "nightly",
		Type: "batch", Status: "running", SubmitTime: 1700086400e9}
	f.summaries["nightly"] = &api.JobSummary{JobID: "nightly", Children: &api.JobChildrenSummary{Running: 1, Dead: 1}}
	code, out, errOut := f.runCLI("job", "status", "nightly")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Cron\s+= 0 3 \* \* \*$`, out)
	require.Regexp(t, `(?m)^Prohibit Overlap\s+= true$`, out)
	require.Regexp(t, `(?m)^Next Periodic Launch\s+= \d{4}-\d\d-\d\dT03:00:00Z \(`, out)
	require.Regexp(t, `(?m)^Children Job Summary\nPending\s+Running\s+Dead\n0\s+1\s+1$`, out)
	require.Regexp(t, `(?m)^nightly/periodic-1700086400\s+2023-11-15T22:13:20Z\s+running\nnightly/periodic-1700000000\s+2023-11-14T22:13:20Z\s+dead$`, out)
}
