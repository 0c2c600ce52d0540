package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// namespacesSent are the ?namespace= values of the recorded calls of
// method and path ("-" for none).
func namespacesSent(f *fakeAPI, method, path string) []string {
	return paramSent(f, method, path, "namespace")
}

// paramSent lists the query parameter key of each call to method path
// ("-": none).
func paramSent(f *fakeAPI, method, path, key string) []string {
	var out []string
	for _, c := range f.callsTo(method, path) {
		v, ok := c.Query[key]
		if !ok {
			v = "-"
		}
		out = append(out, v)
	}
	return out
}

// TestNamespaceFlag: the global -namespace reaches the job, allocation,
// evaluation and variable endpoints as ?namespace=; without it,
// $TROUPE_NAMESPACE, then $NOMAD_NAMESPACE; without any, none is sent.
func TestNamespaceFlag(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web"] = &messages.Job{ID: "web", Namespace: "prod", Type: "service"}
	f.summaries["web"] = &api.JobSummary{JobID: "web"}
	f.allocs[allocID] = &messages.Allocation{ID: allocID, JobID: "web", Namespace: "prod", TaskGroup: "web"}
	f.evals[evalID] = []*messages.Evaluation{evalWith("complete")}

	code, _, stderr := f.runCLI("job", "status", "-namespace", "prod", "web")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"prod"}, namespacesSent(f, http.MethodGet, "/v1/job/web"))
	require.NotEmpty(t, namespacesSent(f, http.MethodGet, "/v1/job/web/allocations"))
	for _, ns := range namespacesSent(f, http.MethodGet, "/v1/job/web/allocations") {
		require.Equal(t, "prod", ns)
	}

	code, _, stderr = f.runCLI("alloc", "status", "-namespace", "prod", allocID)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"prod"}, namespacesSent(f, http.MethodGet, "/v1/allocation/"+allocID))

	code, _, stderr = f.runCLI("eval", "status", "-namespace", "prod", evalID)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"prod"}, namespacesSent(f, http.MethodGet, "/v1/evaluation/"+evalID))

	code, _, stderr = f.runCLI("job", "stop", "-detach", "-namespace", "prod", "web")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"prod"}, namespacesSent(f, http.MethodDelete, "/v1/job/web"))

	env := map[string]string{}
	getenv = func(k string) string { return env[k] }
	t.Cleanup(func() { getenv = func(string) string { return "" } })
	env[nomadNamespaceEnv] = "from-nomad"
	code, _, stderr = f.runCLI("job", "status", "web")
	require.Equal(t, 0, code, stderr)
	env[namespaceEnv] = "from-troupe"
	code, _, stderr = f.runCLI("job", "status", "web")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = f.runCLI("job", "status", "-namespace", "flag", "web")
	require.Equal(t, 0, code, stderr)
	clear(env)
	code, _, stderr = f.runCLI("job", "status", "web")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"prod", "prod", "from-nomad", "from-troupe", "flag", "-"}, namespacesSent(f, http.MethodGet, "/v1/job/web"))
}

// TestJobRunNamespace: `job run -namespace` places a job file that names
// no namespace; a file that names one goes there, as Nomad's CLI does.
func TestJobRunNamespace(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = ""
	plain := writeFile(t, "web.json", `{"ID":"web","Type":"service"}`)
	inProd := writeFile(t, "api.json", `{"ID":"api","Namespace":"prod","Type":"service"}`)

	code, _, stderr := f.runCLI("job", "run", "-detach", "-namespace", "dev", plain)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = f.runCLI("job", "run", "-detach", "-namespace", "dev", inProd)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = f.runCLI("job", "run", "-detach", plain)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"dev", "prod", "-"}, namespacesSent(f, http.MethodPut, "/v1/jobs"))
}

// TestJobLookupInEveryNamespace: with -namespace '*' a job is found in
// whichever namespace holds it and then addressed in that one; an ID in
// two namespaces is ambiguous and names both.
func TestJobLookupInEveryNamespace(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web"] = &messages.Job{ID: "web", Namespace: "prod", Type: "service"}
	f.summaries["web"] = &api.JobSummary{JobID: "web"}

	code, _, stderr := f.runCLI("job", "stop", "-detach", "-namespace", "*", "web")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"*"}, namespacesSent(f, http.MethodGet, "/v1/jobs"))
	require.Equal(t, []string{"prod"}, namespacesSent(f, http.MethodGet, "/v1/job/web"))
	require.Equal(t, []string{"prod"}, namespacesSent(f, http.MethodDelete, "/v1/job/web"))
}

func TestJobLookupInEveryNamespaceAmbiguous(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web1"] = &messages.Job{ID: "web1", Namespace: "prod", Type: "service"}
	f.jobs["web2"] = &messages.Job{ID: "web2", Namespace: "dev", Type: "service"}
	code, _, stderr := f.runCLI("job", "stop", "-detach", "-namespace", "*", "web")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "matched 2 jobs")
	require.Contains(t, stderr, "prod/web1")
	require.Contains(t, stderr, "dev/web2")
	require.Empty(t, f.callsTo(http.MethodDelete, "/v1/job/web1"))
	require.Empty(t, f.callsTo(http.MethodDelete, "/v1/job/web2"))
}
