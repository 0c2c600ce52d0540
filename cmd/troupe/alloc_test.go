package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func sampleAlloc() *messages.Allocation {
	return &messages.Allocation{
		ID: allocID, EvalID: evalID, Name: "web.web[0]", NodeID: nodeID, NodeName: "host-1", JobID: "web",
		TaskGroup: "web", DesiredStatus: "run", ClientStatus: "running", ClientDescription: "Tasks are running",
		CreateTime: ago(12 * time.Second), ModifyTime: ago(3 * time.Second),
		AllocatedResources: &messages.AllocatedResources{Tasks: map[string]*messages.AllocatedTaskResources{
			"server": {Cpu: &messages.AllocatedCpuResources{CpuShares: 100}, Memory: &messages.AllocatedMemoryResources{MemoryMB: 128}},
		}},
		TaskStates: map[string]*messages.TaskState{"server": {State: "running", Events: []*messages.TaskEvent{
			{Type: "Received", Time: time.Date(2026, 11, 29, 19, 1, 0, 0, time.UTC).UnixNano(), DisplayMessage: "Task received by client"},
			{Type: "Started", Time: time.Date(2026, 11, 29, 19, 1, 1, 0, time.UTC).UnixNano(), DisplayMessage: "Task started by client"},
		}}},
	}
}

func TestAllocStatus(t *testing.T) {
	f := newFakeAPI(t)
	f.allocs[allocID] = sampleAlloc()
	code, out, errOut := f.runCLI("alloc", "status", "a1a1")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{
		"ID                  = " + allocID + "\n",
		"Eval ID             = e1e1e1e1\n",
		"Node ID             = n1n1n1n1\n",
		"Client Description  = Tasks are running\n",
		"Desired Description = <none>\n",
		"Created             = 12s ago\n",
		"Modified            = 3s ago\n",
		"Task \"server\" is \"running\"\n",
		"100 MHz  128 MiB\n",
		"Recent Events:\n",
	} {
		require.Contains(t, out, want)
	}
	started := strings.Index(out, "Task started by client")
	received := strings.Index(out, "Task received by client")
	require.Less(t, started, received, "newest event first")
	require.Regexp(t, `(?m)^2026-11-29T19:01:01Z  Started   Task started by client$`, out)
}

func TestAllocLogs(t *testing.T) {
	f := newFakeAPI(t)
	f.allocs[allocID] = sampleAlloc()
	two := sampleAlloc()
	two.ID = "a2a2a2a2-0000-4000-8000-000000000002"
	two.TaskStates["sidecar"] = &messages.TaskState{State: "running"}
	f.allocs[two.ID] = two
	f.logs[allocID+"/server/stdout"] = "one\ntwo\nthree\nfour\n"
	f.logs[allocID+"/server/stderr"] = "oops\n"
	f.logs[two.ID+"/sidecar/stdout"] = "side\n"
	tests := []struct {
		name string
		args []string
		code int
		want string
		err  string
	}{
		{name: "whole stdout", args: []string{allocID}, want: "one\ntwo\nthree\nfour\n"},
		{name: "stderr", args: []string{"-stderr", allocID}, want: "oops\n"},
		{name: "tail", args: []string{"-tail", "-n", "2", allocID}, want: "three\nfour\n"},
		{name: "n implies tail", args: []string{"-n", "1", allocID, "server"}, want: "four\n"},
		{name: "follow with tail", args: []string{"-f", "-n", "1", allocID}, want: "four\n"},
		{name: "named task", args: []string{two.ID, "sidecar"}, want: "side\n"},
		{name: "task needed", args: []string{two.ID}, code: 1, err: "runs 2 tasks (server, sidecar)"},
		{name: "unknown task", args: []string{allocID, "nope"}, code: 1, err: `has no task "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := f.runCLI(append([]string{"alloc", "logs"}, tt.args...)...)
			require.Equal(t, tt.code, code, errOut)
			require.Equal(t, tt.want, out)
			require.Contains(t, errOut, tt.err)
		})
	}
	calls := f.callsTo("GET", "/v1/client/fs/logs/"+allocID)
	require.Equal(t, "true", calls[0].Query["plain"])
	last := calls[len(calls)-1]
	require.Equal(t, "true", last.Query["follow"], "-f follows after the tail")
	require.Equal(t, "19", last.Query["offset"], "following starts where the tail ended")
}

func TestAllocStop(t *testing.T) {
	f := newFakeAPI(t)
	f.allocs[allocID] = sampleAlloc()
	f.evalID = evalID
	code, out, errOut := f.runCLI("alloc", "stop", "-detach", "a1a1a1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Evaluation ID: "+evalID)
	require.Len(t, f.callsTo("POST", "/v1/allocation/"+allocID+"/stop"), 1)
}
