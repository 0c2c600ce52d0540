package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// TestListCommandsSendFilter: job status, node status and var list send
// -filter as ?filter= (the API evaluates it: httpapi and agent test
// that) and show the API's 400 for an expression that does not parse.
func TestListCommandsSendFilter(t *testing.T) {
	got := map[string]string{}
	mux := http.NewServeMux()
	answer := func(path string, v any) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			f := r.URL.Query().Get("filter")
			if f == "Status ==" {
				http.Error(w, "failed to read filter expression: 1:10 (9): no match found", http.StatusBadRequest)
				return
			}
			got[path] = f
			require.NoError(t, json.NewEncoder(w).Encode(v))
		})
	}
	answer("/v1/jobs", []*api.JobListStub{{ID: "web", Type: "service", Status: "running"}})
	answer("/v1/nodes", []*api.NodeListStub{{ID: "n1n1n1n1-0000", Name: "node-a", Status: "ready"}})
	answer("/v1/vars", []*api.VariableMetadata{{Namespace: "default", Path: "app/db"}})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, tt := range []struct {
		args []string
		path string
		want string
	}{
		{[]string{"job", "status"}, "/v1/jobs", "web"},
		{[]string{"node", "status"}, "/v1/nodes", "node-a"},
		{[]string{"var", "list"}, "/v1/vars", "app/db"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append(append([]string{}, tt.args...), "-address", srv.URL, "-filter", `Status == "running"`)
			require.Equal(t, 0, run(args, &stdout, &stderr), stderr.String())
			require.Contains(t, stdout.String(), tt.want)
			require.Equal(t, `Status == "running"`, got[tt.path])

			stdout.Reset()
			args = append(append([]string{}, tt.args...), "-address", srv.URL, "-filter", "Status ==")
			require.Equal(t, 1, run(args, &stdout, &stderr))
			require.Contains(t, stderr.String(), "failed to read filter expression")
		})
	}
}
