package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// fakeServices serves the service endpoints' shapes (the real rules are
// tested in httpapi and agent).
func fakeServices(t *testing.T, deleted *[]string) string {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		require.NoError(t, json.NewEncoder(w).Encode(v))
	}
	mux.HandleFunc("GET /v1/services", func(w http.ResponseWriter, r *http.Request) {
		out := []*api.ServiceRegistrationListStub{{Namespace: "default", Services: []*api.ServiceRegistrationStub{
			{ServiceName: "web", Tags: []string{"a", "b"}}}}}
		if r.URL.Query().Get("namespace") == "*" {
			out = append(out, &api.ServiceRegistrationListStub{Namespace: "prod",
				Services: []*api.ServiceRegistrationStub{{ServiceName: "db"}}})
		}
		reply(w, out)
	})
	mux.HandleFunc("GET /v1/service/{name}", func(w http.ResponseWriter, r *http.Request) {
		out := []*messages.ServiceRegistration{}
		if r.PathValue("name") == "web" {
			out = append(out, &messages.ServiceRegistration{ID: "_nomad-task-1", ServiceName: "web", JobID: "web",
				Address: "10.0.0.1", Port: 8080, Tags: []string{"a"}, NodeID: "0123456789abcdef", AllocID: "fedcba9876543210"})
		}
		reply(w, out)
	})
	mux.HandleFunc("DELETE /v1/service/{name}/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "_nomad-task-1" {
			http.Error(w, "service registration not found", http.StatusNotFound)
			return
		}
		*deleted = append(*deleted, r.PathValue("name")+"/"+r.PathValue("id"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestServiceCommands(t *testing.T) {
	var deleted []string
	url := fakeServices(t, &deleted)
	runIt := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"service", args[0], "-address", url}, args[1:]...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := runIt("list")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Service Name  Tags\nweb           [a,b]\n", out)
	code, out, errOut = runIt("list", "-namespace", "*")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Namespace  Service Name  Tags\ndefault    web           [a,b]\nprod       db            []\n", out)

	code, out, errOut = runIt("info", "web")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Job ID  Address        Tags  Node ID   Alloc ID\nweb     10.0.0.1:8080  [a]   01234567  fedcba98\n", out)
	code, out, _ = runIt("info", "nope")
	require.Equal(t, 0, code)
	require.Equal(t, "No service registrations found for \"nope\"\n", out)

	code, out, errOut = runIt("delete", "web", "_nomad-task-1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully deleted service registration\n", out)
	require.Equal(t, []string{"web/_nomad-task-1"}, deleted)
	code, _, errOut = runIt("delete", "web", "other")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Error deleting the service registration")
	code, _, _ = runIt("delete", "web")
	require.NotEqual(t, 0, code, "two arguments")
}
