package agent

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBadInputChangesNothing sends malformed, invalid, oversized and unknown
// requests: each gets a clear 4xx naming the problem, and the state index
// does not move.
func TestBadInputChangesNothing(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	base := "http://" + a.HTTPAddr()
	valid := `{"Job":{"ID":"ok","TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},"Resources":{"CPU":100,"MemoryMB":32}}]}]}}`
	cases := []struct {
		name, method, path, body string
		code                     int
		says                     string
	}{
		{"malformed json", "PUT", "/v1/jobs", `{"Job": {"ID": "x",,}}`, 400, "line 1, column"},
		{"count below zero", "PUT", "/v1/jobs", strings.Replace(valid, `"Count":1`, `"Count":-1`, 1), 400, "count"},
		{"no tasks", "PUT", "/v1/jobs", `{"Job":{"ID":"x","TaskGroups":[{"Name":"g","Count":1}]}}`, 400, "task"},
		{"unknown driver", "PUT", "/v1/jobs", strings.Replace(valid, `"exec"`, `"warp"`, 1), 400, `unknown driver "warp"`},
		{"memory zero", "PUT", "/v1/jobs", strings.Replace(valid, `"MemoryMB":32`, `"MemoryMB":0`, 1), 400, "memory"},
		{"oversized body", "PUT", "/v1/jobs", `{"Job":{"ID":"` + strings.Repeat("x", 5<<20) + `"}}`, 413, "too large"},
		{"malformed hcl", "POST", "/v1/jobs/parse", `{"JobHCL":"job \"x\" {\n  group \"g\" {\n    count = \n  }\n}","Canonicalize":true}`, 400, "job.hcl:3:13"},
		{"unknown job", "GET", "/v1/job/nope", "", 404, "job not found"},
		{"stop unknown job", "DELETE", "/v1/job/nope", "", 404, "job not found"},
		{"unknown alloc", "GET", "/v1/allocation/nope", "", 404, "alloc not found"},
		{"stop unknown alloc", "POST", "/v1/allocation/nope/stop", "", 404, "alloc not found"},
		{"unknown eval", "GET", "/v1/evaluation/nope", "", 404, "eval not found"},
		{"unknown node", "GET", "/v1/node/nope", "", 404, "node not found"},
		{"bad eligibility", "POST", "/v1/node/" + a.Node().GetID() + "/eligibility", `{"Eligibility":"maybe"}`, 400, "Eligibility"},
		{"bad index", "GET", "/v1/jobs?index=abc", "", 400, "invalid index"},
		{"bad log type", "GET", "/v1/client/fs/logs/nope?type=stdin", "", 400, "invalid type"},
		{"logs of an unknown alloc", "GET", "/v1/client/fs/logs/nope", "", 404, "alloc not found"},
		{"remove the last voter", "DELETE", "/v1/operator/raft/peer?id=" + a.raftID, "", 400, "last voter"},
		{"remove an unknown peer", "DELETE", "/v1/operator/raft/peer?id=nope", "", 400, "nope"},
		{"remove without an id", "DELETE", "/v1/operator/raft/peer", "", 400, "missing ?id="},
		{"drain an unknown node", "POST", "/v1/node/nope/drain", `{"DrainSpec":{"Deadline":0}}`, 404, "node not found"},
		{"drain with a bad deadline", "POST", "/v1/node/" + a.Node().GetID() + "/drain", `{"DrainSpec":{"Deadline":-5}}`, 400, "Deadline"},
	}
	before := a.Store().Snapshot().Index()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, base+c.path, bytes.NewBufferString(c.body))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, c.code, resp.StatusCode, string(body))
			require.Contains(t, string(body), c.says)
			require.Equal(t, before, a.Store().Snapshot().Index(), "state changed")
		})
	}
	require.Empty(t, a.Store().Snapshot().Jobs())
}

// TestBadBridgeSubnetStopsAgentStart: an invalid subnet for the bridge
// network is a configuration error at start that names the subnet.
func TestBadBridgeSubnetStopsAgentStart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.BridgeSubnet = "10.0.0.0/33"
	a, err := New(cfg)
	require.NoError(t, err)
	err = a.Start()
	require.Error(t, err)
	require.Contains(t, err.Error(), "10.0.0.0/33")
}
