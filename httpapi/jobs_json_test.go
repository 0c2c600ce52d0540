package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestJobJSONKeepsLargeIntegersExact: a job's SubmitTime (unix
// nanoseconds, here 2^53 + 1, more than a float64 holds) comes out of
// GET /v1/job/:id digit for digit, and Nomad's client reads it exactly.
func TestJobJSONKeepsLargeIntegersExact(t *testing.T) {
	const submit = 1<<53 + 1
	b := newFSMBackend()
	b.mustApply(t, &messages.Command{Time: submit, Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{
		Job: &messages.Job{ID: "web", Name: "web", Namespace: "default", Type: "service"}}}})

	code, body, _ := do(t, b, "GET", "/v1/job/web", "", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"SubmitTime":9007199254740993`)

	job, _, err := nomadAgainst(t, b).Jobs().Info("web", nil)
	require.NoError(t, err)
	require.NotNil(t, job.SubmitTime)
	require.Equal(t, int64(submit), *job.SubmitTime)
}

// TestJobParseKeepsZeroValues: POST /v1/jobs/parse answers with a zero
// count and zero restart attempts written, so the job can go back to
// PUT /v1/jobs unchanged.
func TestJobParseKeepsZeroValues(t *testing.T) {
	hcl := `job \"web\" {\n group \"g\" {\n count = 0\n restart {\n attempts = 0\n }\n task \"t\" {\n driver = \"exec\"\n }\n }\n}`
	code, body, _ := do(t, &fakeBackend{}, "POST", "/v1/jobs/parse", `{"JobHCL":"`+hcl+`","Canonicalize":true}`, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"Count":0`)
	require.Contains(t, body, `"RestartPolicy":{"Attempts":0`)
}
