package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// fakeNamespaces serves namespaces as the namespace endpoints do (the
// real API's rules are tested in httpapi and agent).
type fakeNamespaces struct {
	t   *testing.T
	nss map[string]*messages.Namespace
	url string
}

func newFakeNamespaces(t *testing.T) *fakeNamespaces {
	f := &fakeNamespaces{t: t, nss: map[string]*messages.Namespace{
		"default": {Name: "default", Description: "Default shared namespace"}}}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		require.NoError(t, json.NewEncoder(w).Encode(v))
	}
	mux.HandleFunc("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		out := []*messages.Namespace{}
		for _, ns := range f.nss {
			if strings.HasPrefix(ns.Name, r.URL.Query().Get("prefix")) {
				out = append(out, ns)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		reply(w, out)
	})
	mux.HandleFunc("GET /v1/namespace/{name}", func(w http.ResponseWriter, r *http.Request) {
		ns := f.nss[r.PathValue("name")]
		if ns == nil {
			http.Error(w, "namespace not found", http.StatusNotFound)
			return
		}
		reply(w, ns)
	})
	mux.HandleFunc("PUT /v1/namespace", func(w http.ResponseWriter, r *http.Request) {
		var ns messages.Namespace
		require.NoError(t, json.NewDecoder(r.Body).Decode(&ns))
		f.nss[ns.Name] = &ns
	})
	mux.HandleFunc("DELETE /v1/namespace/{name}", func(w http.ResponseWriter, r *http.Request) {
		switch name := r.PathValue("name"); {
		case name == "default":
			http.Error(w, `deleting namespace "default" is not allowed`, http.StatusBadRequest)
		case f.nss[name] == nil:
			http.Error(w, "namespace not found", http.StatusNotFound)
		default:
			delete(f.nss, name)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// run runs `troupe namespace <sub> -address URL args...`.
func (f *fakeNamespaces) run(sub string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"namespace", sub, "-address", f.url}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestNamespaceList(t *testing.T) {
	f := newFakeNamespaces(t)
	f.nss["prod"] = &messages.Namespace{Name: "prod"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"all", nil, "Name     Description\ndefault  Default shared namespace\nprod     <none>\n"},
		{"prefix", []string{"-prefix", "pr"}, "Name  Description\nprod  <none>\n"},
		{"none", []string{"-prefix", "zz"}, "No namespaces found\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := f.run("list", tt.args...)
			require.Equal(t, 0, code, errOut)
			require.Equal(t, tt.want, out)
		})
	}
	code, out, _ := f.run("list", "-json")
	require.Equal(t, 0, code)
	var nss []*messages.Namespace
	require.NoError(t, json.Unmarshal([]byte(out), &nss))
	require.Len(t, nss, 2)
}

func TestNamespaceStatus(t *testing.T) {
	f := newFakeNamespaces(t)
	f.nss["prod"] = &messages.Namespace{Name: "prod", Description: "Production", Meta: map[string]string{"team": "sre", "env": "prod"}}
	tests := []struct {
		name, ns  string
		code      int
		want, err string
	}{
		{"with meta", "prod", 0, "Name        = prod\nDescription = Production\n\nMetadata\nenv  = prod\nteam = sre\n", ""},
		{"no meta", "default", 0, "Name        = default\nDescription = Default shared namespace\n\nMetadata\nNo metadata\n", ""},
		{"unknown", "nope", 1, "", "Error querying the namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := f.run("status", tt.ns)
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.want, out)
			require.Contains(t, errOut, tt.err)
		})
	}
}

func TestNamespaceApplyAndDelete(t *testing.T) {
	f := newFakeNamespaces(t)
	code, out, errOut := f.run("apply", "-description", "Production", "prod")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully applied namespace \"prod\"!\n", out)
	require.Equal(t, "Production", f.nss["prod"].Description)

	f.nss["prod"].Meta = map[string]string{"team": "sre"}
	code, _, errOut = f.run("apply", "-description", "Prod", "prod")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Prod", f.nss["prod"].Description)
	require.Equal(t, map[string]string{"team": "sre"}, f.nss["prod"].Meta, "apply keeps the metadata")

	code, _, errOut = f.run("apply")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "NAME")

	code, out, errOut = f.run("delete", "prod")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully deleted namespace \"prod\"!\n", out)
	require.NotContains(t, f.nss, "prod")

	code, _, errOut = f.run("delete", "default")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `deleting namespace "default" is not allowed`)
}
