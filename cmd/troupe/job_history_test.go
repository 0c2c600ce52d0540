package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/jobdiff"
	"github.com/troupe-dev/troupe/messages"
)

func TestJobHistory(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web"] = &messages.Job{ID: "web", Type: "service", Version: 1}
	at := time.Date(2026, 11, 29, 19, 1, 0, 0, time.UTC).UnixNano()
	f.versions = &api.JobVersionsResponse{
		Versions: []*messages.Job{{ID: "web", Version: 1, SubmitTime: at}, {ID: "web", Version: 0, SubmitTime: at}},
		Diffs: []*jobdiff.JobDiff{{Type: "Edited", ID: "web", TaskGroups: []*jobdiff.TaskGroupDiff{{Type: "Edited", Name: "g",
			Fields: []*jobdiff.FieldDiff{{Type: "Edited", Name: "Count", Old: "1", New: "2"}}}}}},
	}
	code, out, errOut := f.runCLI("job", "history", "-p", "web")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Version\s+= 1$`, out)
	require.Regexp(t, `(?m)^Version\s+= 0$`, out)
	require.Less(t, strings.Index(out, "= 1\n"), strings.Index(out, "= 0\n"), "newest first")
	require.Contains(t, out, "Diff:\n  +/- Job: \"web\"")
	require.Contains(t, out, `Count: "1" => "2"`)
	require.Equal(t, "true", f.callsTo("GET", "/v1/job/web/versions")[0].Query["diffs"])

	code, _, _ = f.runCLI("job", "history", "web")
	require.Equal(t, 0, code)
	require.Empty(t, f.callsTo("GET", "/v1/job/web/versions")[1].Query["diffs"], "diffs only with -p")
}

func TestJobRevert(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	f.jobs["web"] = &messages.Job{ID: "web", Type: "service", Version: 3}
	code, out, errOut := f.runCLI("job", "revert", "-detach", "web", "1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Job revert successful")
	calls := f.callsTo("PUT", "/v1/job/web/revert")
	require.Len(t, calls, 1)
	var req api.JobRevertRequest
	require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &req))
	require.Equal(t, api.JobRevertRequest{JobID: "web", JobVersion: 1}, req)

	for _, args := range [][]string{{"web"}, {"web", "x"}, {"web", "-1"}} {
		code, _, errOut = f.runCLI(append([]string{"job", "revert"}, args...)...)
		require.Equal(t, 1, code, "%v", args)
		require.Contains(t, errOut, "JOB VERSION")
	}
	require.Len(t, f.callsTo("PUT", "/v1/job/web/revert"), 1, "bad arguments send nothing")
}
