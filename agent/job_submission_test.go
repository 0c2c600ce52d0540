package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestJobSubmissionThroughNomadsClient registers a job with its source
// through Nomad's own client, as `nomad job run` does, and reads each
// version's source back; a version trimmed away, a version registered
// without a source and a purged job answer Nomad's 404; an oversized
// source is discarded with Nomad's warning while the job registers.
func TestJobSubmissionThroughNomadsClient(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.JobVersions = 2
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := func(count int) *nomad.Job {
		j := nomad.NewBatchJob("src", "src", "global", 50)
		tg := nomad.NewTaskGroup("g", count)
		tg.AddTask(nomad.NewTask("t", "exec").SetConfig("command", "/bin/true").
			Require(&nomad.Resources{CPU: ptr(20), MemoryMB: ptr(16)}))
		j.AddTaskGroup(tg)
		return j
	}
	source := func(count int) string {
		return "variable \"count\" {\n  default = 1\n}\n\njob \"src\" {\n  # count " + strings.Repeat("=", count) + "\n}\n"
	}
	register := func(count int, sub *nomad.JobSubmission) *nomad.JobRegisterResponse {
		t.Helper()
		resp, _, err := c.Jobs().RegisterOpts(job(count), &nomad.RegisterOptions{Submission: sub}, nil)
		require.NoError(t, err)
		return resp
	}

	register(1, &nomad.JobSubmission{Source: source(1), Format: "hcl2", VariableFlags: map[string]string{"count": "1"}})
	register(2, &nomad.JobSubmission{Source: source(2), Format: "hcl2", VariableFlags: map[string]string{"count": "2"},
		Variables: "count = 2\n"})
	for v, want := range map[int]*nomad.JobSubmission{
		0: {Source: source(1), Format: "hcl2", VariableFlags: map[string]string{"count": "1"}},
		1: {Source: source(2), Format: "hcl2", VariableFlags: map[string]string{"count": "2"}, Variables: "count = 2\n"},
	} {
		got, _, err := c.Jobs().Submission("src", v, nil)
		require.NoError(t, err, "version %d", v)
		require.Equal(t, want, got, "version %d", v)
	}
	_, _, err = c.Jobs().Submission("src", 0, &nomad.QueryOptions{Namespace: "other"})
	require.ErrorContains(t, err, "404", "another namespace's job has no source")
	_, _, err = c.Jobs().Submission("src", 7, nil)
	require.ErrorContains(t, err, "job source not found")

	for q, want := range map[string]int{"": 200, "?version=1": 200, "?version=x": 400, "?version=-1": 400} {
		resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/job/src/submission" + q)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "%q: %s", q, body)
		if want == 200 {
			require.Contains(t, string(body), `"Variables":"count = 2\n"`, "without version: the current one's")
		} else {
			require.Contains(t, string(body), "Unable to parse job submission version parameter")
		}
	}

	// A third version (kept: 2) trims version 0 and its source away.
	register(3, &nomad.JobSubmission{Source: source(3), Format: "json"})
	_, _, err = c.Jobs().Submission("src", 0, nil)
	require.ErrorContains(t, err, "404")
	require.ErrorContains(t, err, "job source not found")
	got, _, err := c.Jobs().Submission("src", 2, nil)
	require.NoError(t, err)
	require.Equal(t, source(3), got.Source)
	require.Equal(t, "json", got.Format)

	// Over Nomad's 1 MB limit: the job registers as version 3, its
	// source is discarded with Nomad's warning.
	resp := register(4, &nomad.JobSubmission{Source: strings.Repeat("#", 1_000_001), Format: "hcl2"})
	require.Contains(t, resp.Warnings, "job source size of 1.0 MB exceeds maximum of 1.0 MB and will be discarded")
	info, _, err := c.Jobs().Info("src", nil)
	require.NoError(t, err)
	require.EqualValues(t, 3, *info.Version, "the job itself registered")
	_, _, err = c.Jobs().Submission("src", 3, nil)
	require.ErrorContains(t, err, "job source not found")

	// Reverting to version 2 makes version 4 with version 2's source.
	_, _, err = c.Jobs().Revert("src", 2, nil, nil, "", "")
	require.NoError(t, err)
	got, _, err = c.Jobs().Submission("src", 4, nil)
	require.NoError(t, err)
	require.Equal(t, source(3), got.Source, "a revert keeps the reverted-to version's source")

	// Purged, the job's sources go with it.
	_, _, err = c.Jobs().Deregister("src", true, nil)
	require.NoError(t, err)
	_, _, err = c.Jobs().Submission("src", 2, nil)
	require.ErrorContains(t, err, "job source not found")
	require.Nil(t, a.Store().Snapshot().JobSubmission("default", "src", 4))
}
