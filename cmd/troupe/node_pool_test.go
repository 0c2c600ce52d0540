package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// poolRoutes serves f.pools as the node pool endpoints do (the real API's
// rules are tested in httpapi and agent).
func (f *fakeAPI) poolRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/node/pools", func(w http.ResponseWriter, r *http.Request) {
		out := []*messages.NodePool{}
		for _, name := range sortedKeys(f.pools) {
			if strings.HasPrefix(name, r.URL.Query().Get("prefix")) {
				out = append(out, f.pools[name])
			}
		}
		f.reply(w, out)
	})
	mux.HandleFunc("PUT /v1/node/pools", func(w http.ResponseWriter, r *http.Request) {
		var p messages.NodePool
		require.NoError(f.t, json.NewDecoder(r.Body).Decode(&p))
		if p.Name == "default" {
			http.Error(w, `modifying node pool "default" is not allowed`, http.StatusBadRequest)
			return
		}
		f.pools[p.Name] = &p
	})
	pool := func(r *http.Request) *messages.NodePool { return f.pools[r.PathValue("name")] }
	mux.HandleFunc("GET /v1/node/pool/{name}", func(w http.ResponseWriter, r *http.Request) { f.reply(w, pool(r)) })
	mux.HandleFunc("DELETE /v1/node/pool/{name}", func(w http.ResponseWriter, r *http.Request) {
		if pool(r) == nil {
			http.Error(w, "node pool not found", http.StatusNotFound)
			return
		}
		delete(f.pools, r.PathValue("name"))
	})
	mux.HandleFunc("GET /v1/node/pool/{name}/nodes", func(w http.ResponseWriter, r *http.Request) {
		out := []*api.NodeListStub{}
		for _, n := range f.nodes {
			if n.NodePool == r.PathValue("name") {
				out = append(out, &api.NodeListStub{ID: n.ID, Name: n.Name, Datacenter: n.Datacenter, NodePool: n.NodePool,
					SchedulingEligibility: n.SchedulingEligibility, Status: n.Status})
			}
		}
		f.reply(w, out)
	})
	mux.HandleFunc("GET /v1/node/pool/{name}/jobs", func(w http.ResponseWriter, r *http.Request) {
		out := []*api.JobListStub{}
		for _, j := range f.jobs {
			if j.NodePool == r.PathValue("name") {
				out = append(out, &api.JobListStub{ID: j.ID, Type: j.Type, Priority: int(j.Priority), Status: j.Status})
			}
		}
		f.reply(w, out)
	})
}

func builtInPools(f *fakeAPI) {
	f.pools["all"] = &messages.NodePool{Name: "all", Description: "Node pool with all nodes in the cluster."}
	f.pools["default"] = &messages.NodePool{Name: "default", Description: "Default node pool."}
}

func TestNodePoolList(t *testing.T) {
	f := newFakeAPI(t)
	builtInPools(f)
	f.pools["dev"] = &messages.NodePool{Name: "dev"}
	tests := []struct {
		name string
		args []string
		want []string // lines, exactly
	}{
		{"all", nil, []string{"Name     Description", "all      Node pool with all nodes in the cluster.", "default  Default node pool.",
			"dev      <none>"}},
		{"prefix", []string{"-prefix", "de"}, []string{"Name     Description", "default  Default node pool.", "dev      <none>"}},
		{"none", []string{"-prefix", "zz"}, []string{"No node pools found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := f.runCLI(append([]string{"node", "pool", "list"}, tt.args...)...)
			require.Equal(t, 0, code, errOut)
			require.Equal(t, tt.want, strings.Split(strings.TrimRight(out, "\n"), "\n"))
		})
	}
	code, out, _ := f.runCLI("node", "pool", "list", "-json")
	require.Equal(t, 0, code)
	var pools []*messages.NodePool
	require.NoError(t, json.Unmarshal([]byte(out), &pools))
	require.Len(t, pools, 3)
}

func TestNodePoolInfo(t *testing.T) {
	f := newFakeAPI(t)
	builtInPools(f)
	f.pools["dev"] = &messages.NodePool{Name: "dev", Description: "Dev nodes", Meta: map[string]string{"owner": "sre", "env": "dev"}}
	tests := []struct {
		name, pool string
		code       int
		want, err  string
	}{
		{"with meta", "dev", 0, "Name        = dev\nDescription = Dev nodes\n\nMetadata\nenv   = dev\nowner = sre\n", ""},
		{"no meta", "default", 0, "Name        = default\nDescription = Default node pool.\n\nMetadata\nNo metadata\n", ""},
		{"unknown", "nope", 1, "", "Error querying the node pool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := f.runCLI("node", "pool", "info", tt.pool)
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.want, out)
			require.Contains(t, errOut, tt.err)
		})
	}
}

func TestNodePoolApply(t *testing.T) {
	tests := []struct {
		name, file, content string
		code                int
		out, err            string
		want                *messages.NodePool
	}{
		{name: "hcl", file: "dev.hcl", content: "node_pool \"dev\" {\n  description = \"Dev\"\n  meta {\n    owner = \"sre\"\n  }\n}\n",
			out: "Successfully applied node pool \"dev\"!\n", want: &messages.NodePool{Name: "dev", Description: "Dev",
				Meta: map[string]string{"owner": "sre"}}},
		{name: "json", file: "dev.json", content: `{"Name":"dev","Description":"Dev"}`,
			out: "Successfully applied node pool \"dev\"!\n", want: &messages.NodePool{Name: "dev", Description: "Dev"}},
		{name: "refused by the server", file: "d.hcl", content: `node_pool "default" {}`, code: 1,
			err: `modifying node pool "default" is not allowed`},
		{name: "unsupported block", file: "s.hcl", content: "node_pool \"x\" {\n  scheduler_config {}\n}\n", code: 1,
			err: "scheduler_config is not supported"},
		{name: "not a pool", file: "j.hcl", content: `job "x" {}`, code: 1, err: "Error parsing the node pool file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t)
			builtInPools(f)
			code, out, errOut := f.runCLI("node", "pool", "apply", writeFile(t, tt.file, tt.content))
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.out, out)
			require.Contains(t, errOut, tt.err)
			if tt.want == nil {
				require.Len(t, f.pools, 2, "nothing applied")
				return
			}
			got := f.pools[tt.want.Name]
			require.Equal(t, tt.want.Description, got.Description)
			require.Equal(t, tt.want.Meta, got.Meta)
		})
	}
}

func TestNodePoolDelete(t *testing.T) {
	f := newFakeAPI(t)
	builtInPools(f)
	f.pools["dev"] = &messages.NodePool{Name: "dev"}
	code, out, errOut := f.runCLI("node", "pool", "delete", "dev")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Successfully deleted node pool \"dev\"!\n", out)
	require.Len(t, f.callsTo("DELETE", "/v1/node/pool/dev"), 1)
	code, _, errOut = f.runCLI("node", "pool", "delete", "dev")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Error deleting the node pool")
	code, _, errOut = f.runCLI("node", "pool", "delete")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "this command takes NAME")
}

func TestNodePoolNodesAndJobs(t *testing.T) {
	f := newFakeAPI(t)
	builtInPools(f)
	f.pools["gpu"] = &messages.NodePool{Name: "gpu"}
	n := sampleNode()
	n.NodePool = "gpu"
	f.nodes[n.ID] = n
	f.jobs["train"] = &messages.Job{ID: "train", Type: "batch", Priority: 50, Status: "running", NodePool: "gpu"}
	code, out, errOut := f.runCLI("node", "pool", "nodes", "gpu")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^n1n1n1n1  gpu\s+dc1\s+host-1\s+`, out)
	code, out, errOut = f.runCLI("node", "pool", "jobs", "gpu")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^train\s+batch\s+50\s+running\s+`, out)
	code, out, _ = f.runCLI("node", "pool", "jobs", "default")
	require.Equal(t, 0, code)
	require.Equal(t, "No running jobs\n", out)
}
