package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// TestJobDispatch: the flags and the payload file become Nomad's
// JobDispatchRequest and idempotency_token; the output is Nomad's.
func TestJobDispatch(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	in := filepath.Join(t.TempDir(), "scene.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"frames":3}`), 0o600))
	code, out, errOut := f.runCLI("job", "dispatch", "-detach", "-meta", "scene=s1", "-meta", "quality=hi",
		"-id-prefix-template", "nightly", "-idempotency-token", "tok-1", "-priority", "70", "render", in)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Dispatched Job ID\s+= render/dispatch-1700000000-0a1b2c3d$`, out)
	require.Regexp(t, `(?m)^Evaluation ID\s+= `+shortID(evalID)+`$`, out)
	calls := f.callsTo("PUT", "/v1/job/render/dispatch")
	require.Len(t, calls, 1)
	require.Equal(t, "tok-1", calls[0].Query["idempotency_token"])
	var req api.JobDispatchRequest
	require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &req))
	require.Equal(t, []byte(`{"frames":3}`), req.Payload)
	require.Equal(t, map[string]string{"scene": "s1", "quality": "hi"}, req.Meta)
	require.Equal(t, "nightly", req.IdPrefixTemplate)
	require.Equal(t, 70, req.Priority)
	require.Contains(t, calls[0].Body, `"Payload":"eyJmcmFtZXMiOjN9"`, "base64, as Nomad's JSON")

	// "-" reads the payload from stdin.
	var stdout, stderr bytes.Buffer
	code = jobDispatch([]string{"-address", f.srv.URL, "-detach", "render", "-"}, strings.NewReader("from stdin"), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	calls = f.callsTo("PUT", "/v1/job/render/dispatch")
	require.Len(t, calls, 2)
	require.NoError(t, json.Unmarshal([]byte(calls[1].Body), &req))
	require.Equal(t, []byte("from stdin"), req.Payload)
	require.NotContains(t, calls[1].Query, "idempotency_token")

	code, _, errOut = f.runCLI("job", "dispatch", "-meta", "novalue", "render")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "KEY=VALUE")
	code, _, errOut = f.runCLI("job", "dispatch")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "JOB [INPUT]")
	big := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("x"), 16*1024+1), 0o600))
	code, _, errOut = f.runCLI("job", "dispatch", "render", big)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "over the limit of 16384 bytes")
	require.Len(t, f.callsTo("PUT", "/v1/job/render/dispatch"), 2, "bad flags and inputs send nothing")
}

func TestJobStatusParameterized(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["render"] = &messages.Job{ID: "render", Type: "batch", Status: "running",
		ParameterizedJob: &messages.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"scene"}, MetaOptional: []string{"quality"}}}
	f.jobs["render/dispatch-1700000000-0a1b2c3d"] = &messages.Job{ID: "render/dispatch-1700000000-0a1b2c3d", ParentID: "render",
		Type: "batch", Status: "dead", SubmitTime: 1700000000e9, Dispatched: true}
	f.jobs["render/dispatch-1700000100-99999999"] = &messages.Job{ID: "render/dispatch-1700000100-99999999", ParentID: "render",
		Type: "batch", Status: "running", SubmitTime: 1700000100e9, Dispatched: true}
	f.summaries["render"] = &api.JobSummary{JobID: "render", Children: &api.JobChildrenSummary{Running: 1, Dead: 1}}
	code, out, errOut := f.runCLI("job", "status", "render")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Parameterized\s+= true$`, out)
	require.Regexp(t, `(?m)^Payload\s+= required$`, out)
	require.Regexp(t, `(?m)^Required Metadata\s+= scene$`, out)
	require.Regexp(t, `(?m)^Optional Metadata\s+= quality$`, out)
	require.Regexp(t, `(?m)^Parameterized Job Summary\nPending\s+Running\s+Dead\n0\s+1\s+1$`, out)
	require.Regexp(t, `(?m)^Dispatched Jobs\nID\s+Status\nrender/dispatch-1700000100-99999999\s+running\nrender/dispatch-1700000000-0a1b2c3d\s+dead$`, out)
}

// TestJobDispatchMonitors: without -detach the dispatched job's
// evaluation is followed to its allocations, as Nomad's CLI does.
func TestJobDispatchMonitors(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	child := "render/dispatch-1700000000-0a1b2c3d"
	toChild := func(e *messages.Evaluation) { e.JobID, e.Type = child, "batch" }
	f.evals[evalID] = []*messages.Evaluation{evalWith("pending", toChild), evalWith("complete", toChild)}
	a := allocStub("running")
	a.JobID = child
	f.jobAllocs[child] = [][]*api.AllocListStub{{a}}
	code, out, errOut := f.runCLI("job", "dispatch", "-meta", "scene=s1", "render")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^Dispatched Job ID\s+= `+regexp.QuoteMeta(child)+`$`, out)
	require.Contains(t, out, `Monitoring evaluation "`+shortID(evalID)+`"`)
	require.Contains(t, out, `Evaluation "`+shortID(evalID)+`" finished with status "complete"`)
}
