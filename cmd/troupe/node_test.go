package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

func sampleNode() *messages.Node {
	return &messages.Node{ID: nodeID, Name: "host-1", Datacenter: "dc1", NodePool: "default", Status: "ready",
		SchedulingEligibility: "eligible",
		Drivers: map[string]*messages.DriverInfo{
			"exec":       {Detected: true, Healthy: true},
			"containerd": {Detected: false},
		},
		Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"},
		NodeResources: &messages.NodeResources{
			Cpu:    &messages.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory: &messages.NodeMemoryResources{MemoryMB: 8192},
		}}
}

func TestNodeStatus(t *testing.T) {
	f := newFakeAPI(t)
	f.nodes[nodeID] = sampleNode()
	f.allocs[allocID] = sampleAlloc()
	other := sampleAlloc()
	other.ID, other.NodeID = "a9a9a9a9-0000", "elsewhere"
	f.allocs[other.ID] = other
	done := sampleAlloc() // finished: holds nothing any more
	done.ID, done.ClientStatus = "a2a2a2a2-0000", "complete"
	f.allocs[done.ID] = done

	t.Run("list", func(t *testing.T) {
		code, out, _ := f.runCLI("node", "status")
		require.Equal(t, 0, code)
		require.Regexp(t, `(?m)^ID\s+Node Pool\s+DC\s+Name\s+Class\s+Drain\s+Eligibility\s+Status$`, out)
		require.Regexp(t, `(?m)^n1n1n1n1  default    dc1  host-1  <none>  false  eligible     ready$`, out)
	})
	t.Run("detail", func(t *testing.T) {
		code, out, _ := f.runCLI("node", "status", "n1n1")
		require.Equal(t, 0, code)
		require.Contains(t, out, "Drivers     = exec\n")
		require.Regexp(t, `(?m)^Driver\s+Detected\s+Healthy\s+Version\s+Description$`, out)
		require.Regexp(t, `(?m)^exec\s+true\s+true\s+`, out)
		require.Contains(t, out, "4000 MHz  4      8192 MiB")
		require.Regexp(t, `(?m)^Allocated Resources\nCPU\s+Memory\s+Disk\n100/4000 MHz\s+128/8192 MiB\s+0/0 MiB$`, out,
			"the running allocation counts, the complete one does not")
		require.Contains(t, out, "a2a2a2a2")
		require.Contains(t, out, "a1a1a1a1")
		require.NotContains(t, out, "a9a9a9a9", "only this node's allocations")
		require.NotContains(t, out, "Attributes")
	})
	t.Run("verbose", func(t *testing.T) {
		code, out, _ := f.runCLI("node", "status", "-verbose", nodeID)
		require.Equal(t, 0, code)
		attrs := out[strings.Index(out, "Attributes"):]
		require.Less(t, strings.Index(attrs, "cpu.arch    = amd64"), strings.Index(attrs, "kernel.name = linux"))
	})
	t.Run("json", func(t *testing.T) {
		code, out, _ := f.runCLI("node", "status", "-json", nodeID)
		require.Equal(t, 0, code)
		var got messages.Node
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.True(t, proto.Equal(sampleNode(), &got))
	})
}

func TestNodeEligibility(t *testing.T) {
	f := newFakeAPI(t)
	f.nodes[nodeID] = sampleNode()
	code, out, errOut := f.runCLI("node", "eligibility", "-disable", "n1n1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ineligible for scheduling")
	calls := f.callsTo("POST", "/v1/node/"+nodeID+"/eligibility")
	require.Len(t, calls, 1)
	var req api.NodeEligibilityUpdateRequest
	require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &req))
	require.Equal(t, api.NodeIneligible, req.Eligibility)

	code, _, errOut = f.runCLI("node", "eligibility", nodeID)
	require.Equal(t, 1, code, "one of -enable or -disable is required")
	require.Contains(t, errOut, "-enable|-disable ID")
}

func TestEvalStatus(t *testing.T) {
	f := newFakeAPI(t)
	f.evals[evalID] = []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) {
		e.Priority = 50
		e.FailedTGAllocs = map[string]*messages.AllocMetric{"web": {NodesEvaluated: 2, NodesExhausted: 2,
			DimensionExhausted: map[string]int32{"cpu": 2}}}
	})}
	code, out, errOut := f.runCLI("eval", "status", "e1e1")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{
		"ID                 = " + evalID + "\n",
		"TriggeredBy        = job-register\n",
		"Placement Failures = true\n",
		"==> Failed Placements\n",
		`Task Group "web" (failed to place 1 allocation):` + "\n",
		`  * Resources exhausted on 2 nodes` + "\n",
		`  * Dimension "cpu" exhausted on 2 nodes` + "\n",
	} {
		require.Contains(t, out, want)
	}
}
