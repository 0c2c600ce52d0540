package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

const (
	evalID  = "e1e1e1e1-0000-4000-8000-000000000001"
	allocID = "a1a1a1a1-0000-4000-8000-000000000001"
	nodeID  = "n1n1n1n1-0000-4000-8000-000000000001"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func evalWith(status string, mutate ...func(e *messages.Evaluation)) *messages.Evaluation {
	e := &messages.Evaluation{ID: evalID, JobID: "web", Type: "service", Status: status, TriggeredBy: "job-register"}
	for _, m := range mutate {
		m(e)
	}
	return e
}

func allocStub(status string) *api.AllocListStub {
	return &api.AllocListStub{ID: allocID, EvalID: evalID, NodeID: nodeID, JobID: "web", TaskGroup: "web",
		DesiredStatus: "run", ClientStatus: status}
}

func TestJobRunMonitor(t *testing.T) {
	failedTG := map[string]*messages.AllocMetric{"web": {
		NodesEvaluated:     1,
		ConstraintFiltered: map[string]int32{"${attr.kernel.name} = windows": 1},
		NodesExhausted:     1,
		DimensionExhausted: map[string]int32{"memory": 1},
	}}
	tests := []struct {
		name     string
		evals    []*messages.Evaluation
		allocs   [][]*api.AllocListStub
		alloc    *messages.Allocation
		wantCode int
		want     []string
		notWant  []string
	}{
		{
			name:   "allocation runs",
			evals:  []*messages.Evaluation{evalWith("pending"), evalWith("complete")},
			allocs: [][]*api.AllocListStub{{allocStub("pending")}, {allocStub("pending")}, {allocStub("running")}},
			want: []string{
				`==> 2026-11-29T19:01:12Z: Monitoring evaluation "e1e1e1e1"`,
				`    Evaluation triggered by job "web"`,
				`    Allocation "a1a1a1a1" created: node "n1n1n1n1", group "web"`,
				`    Evaluation status changed: "pending" -> "complete"`,
				`    Allocation "a1a1a1a1" status changed: "pending" -> "running"`,
			},
		},
		{
			name: "allocation updated in place",
			evals: []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) {
				e.CreateIndex = 20
			})},
			allocs: [][]*api.AllocListStub{{func() *api.AllocListStub {
				a := allocStub("running")
				a.CreateIndex = 7 // made by an earlier evaluation
				return a
			}()}},
			want:    []string{`    Allocation "a1a1a1a1" modified: node "n1n1n1n1", group "web"`},
			notWant: []string{"created", `Allocation "a1a1a1a1" status changed`},
		},
		{
			name: "placement failure",
			evals: []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) {
				e.FailedTGAllocs = failedTG
				e.BlockedEval = "b1b1b1b1-0000"
			})},
			wantCode: exitPlacing,
			want: []string{
				`finished with status "complete" but failed to place all allocations:`,
				`    Task Group "web" (failed to place 1 allocation):`,
				`      * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter`,
				`      * Resources exhausted on 1 nodes`,
				`      * Dimension "memory" exhausted on 1 nodes`,
				`    Evaluation "b1b1b1b1" waiting for additional capacity to place remainder`,
			},
		},
		{
			name: "no eligible nodes",
			evals: []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) {
				e.FailedTGAllocs = map[string]*messages.AllocMetric{"web": {CoalescedFailures: 2}}
			})},
			wantCode: exitPlacing,
			want: []string{
				`    Task Group "web" (failed to place 3 allocations):`,
				`      * No nodes were eligible for evaluation`,
			},
		},
		{
			name: "empty node pool",
			evals: []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) {
				e.FailedTGAllocs = map[string]*messages.AllocMetric{"web": {NodePool: "gpu"}}
			})},
			wantCode: exitPlacing,
			want: []string{
				`      * No nodes were eligible for evaluation`,
				`      * No nodes are available in node pool "gpu"`,
			},
		},
		{
			name:   "allocation fails",
			evals:  []*messages.Evaluation{evalWith("complete")},
			allocs: [][]*api.AllocListStub{{allocStub("pending")}, {allocStub("failed")}},
			alloc: &messages.Allocation{ID: allocID, TaskStates: map[string]*messages.TaskState{"t": {
				State: "dead", Failed: true, Events: []*messages.TaskEvent{
					{Type: "Received", Time: ago(3 * time.Second), DisplayMessage: "Task received by client"},
					{Type: "Driver Failure", Time: ago(2 * time.Second), DisplayMessage: `exec: "nope": not found`},
				}}}},
			wantCode: exitPlacing,
			want: []string{
				`    Allocation "a1a1a1a1" status changed: "pending" -> "failed"`,
				`Allocation "a1a1a1a1" failed`,
				`    Task "t" is "dead" (failed: true); recent events:`,
				`exec: "nope": not found`,
			},
		},
		{
			name:     "failed evaluation",
			evals:    []*messages.Evaluation{evalWith("failed", func(e *messages.Evaluation) { e.StatusDescription = "maximum attempts reached" })},
			wantCode: exitPlacing,
			want:     []string{`Evaluation status changed: "pending" -> "failed"`, "maximum attempts reached"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.evalID = evalID
			f.evals[evalID] = tt.evals
			f.jobAllocs["web"] = tt.allocs
			if tt.alloc != nil {
				f.allocs[allocID] = tt.alloc
			}
			file := writeFile(t, "web.hcl", `job "web" { group "web" {} }`)
			code, out, errOut := f.runCLI("job", "run", file)
			require.Equal(t, tt.wantCode, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			for _, w := range tt.want {
				require.Contains(t, out, w)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, out, w)
			}
			parse := f.callsTo("POST", "/v1/jobs/parse")
			require.Len(t, parse, 1)
			require.Contains(t, parse[0].Body, `"Canonicalize":true`)
		})
	}
}

func TestJobRunBlockingQueries(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	f.evals[evalID] = []*messages.Evaluation{evalWith("pending"), evalWith("complete")}
	f.jobAllocs["web"] = [][]*api.AllocListStub{{allocStub("pending")}, {allocStub("running")}}
	code, _, _ := f.runCLI("job", "run", writeFile(t, "web.hcl", `job "web" {}`))
	require.Equal(t, 0, code)
	evalCalls := f.callsTo("GET", "/v1/evaluation/"+evalID)
	require.Len(t, evalCalls, 2)
	require.Empty(t, evalCalls[0].Query["index"])
	require.NotEmpty(t, evalCalls[1].Query["index"], "second read must block on the index")
	require.Equal(t, "50ms", evalCalls[1].Query["wait"])
	allocCalls := f.callsTo("GET", "/v1/job/web/allocations")
	require.GreaterOrEqual(t, len(allocCalls), 2)
	require.NotEmpty(t, allocCalls[1].Query["index"])
}

func TestJobRunDetachAndJSONFile(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	file := writeFile(t, "job.json", `{"Job": {"ID": "api", "Type": "batch", "TaskGroups": [{"Name": "g", "Count": 3}]}}`)
	code, out, errOut := f.runCLI("job", "run", "-detach", file)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Evaluation ID: "+evalID)
	require.Empty(t, f.callsTo("POST", "/v1/jobs/parse"), "JSON files are not parsed by the agent")
	require.Equal(t, int32(3), f.jobs["api"].TaskGroups[0].Count)

	bare := writeFile(t, "bare.txt", `{"ID": "bare", "Type": "service"}`)
	code, _, errOut = f.runCLI("job", "run", "-detach", "-json-file", bare)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "service", f.jobs["bare"].Type)
}

func TestJobRunErrors(t *testing.T) {
	tests := []struct {
		name, file, content, registerErr, want string
		evals                                  []*messages.Evaluation
		extra                                  []string
	}{
		{name: "api rejects job", file: "web.hcl", content: `job "web" {}`,
			registerErr: `group "web": task "t": resources.memory must be greater than 0`,
			want:        `Error submitting job: Unexpected response code: 400 (group "web": task "t": resources.memory must be greater than 0)`},
		{name: "bad json", file: "x.json", content: `{nope`, want: "Error parsing job file from"},
		{name: "missing file", file: "", want: "Error parsing job file from"},
		{name: "timeout", file: "web.hcl", content: `job "web" {}`, extra: []string{"-timeout", "30ms"},
			evals: []*messages.Evaluation{evalWith("pending")}, want: "timed out waiting for the evaluation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.evalID = evalID
			f.registerErr = tt.registerErr
			f.evals[evalID] = tt.evals
			path := filepath.Join(t.TempDir(), "missing.hcl")
			if tt.file != "" {
				path = writeFile(t, tt.file, tt.content)
			}
			args := append(append([]string{"job", "run"}, tt.extra...), path)
			code, _, errOut := f.runCLI(args...)
			require.Equal(t, 1, code)
			require.Contains(t, errOut, tt.want)
		})
	}
}

func TestJobStop(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	f.jobs["web"] = &messages.Job{ID: "web"}
	f.evals[evalID] = []*messages.Evaluation{evalWith("complete", func(e *messages.Evaluation) { e.TriggeredBy = "job-deregister" })}
	code, out, errOut := f.runCLI("job", "stop", "-purge", "we")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `Monitoring evaluation "e1e1e1e1"`)
	del := f.callsTo("DELETE", "/v1/job/web")
	require.Len(t, del, 1, "the prefix resolves to the full ID")
	require.Equal(t, "true", del[0].Query["purge"])

	code, out, _ = f.runCLI("job", "stop", "-detach", "web")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Evaluation ID: "+evalID)
	require.Empty(t, f.callsTo("DELETE", "/v1/job/web")[1].Query["purge"])
	require.Empty(t, f.callsTo("DELETE", "/v1/job/web")[1].Query["global"])

	code, _, errOut = f.runCLI("job", "stop", "-global", "-detach", "web")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "true", f.callsTo("DELETE", "/v1/job/web")[2].Query["global"])
}

func sampleJob() *messages.Job {
	return &messages.Job{ID: "web", Name: "web", Type: "service", Priority: 50, Datacenters: []string{"dc1", "dc2"},
		Namespace: "default", Status: "running", SubmitTime: time.Date(2026, 11, 29, 19, 1, 2, 0, time.UTC).UnixNano(),
		TaskGroups: []*messages.TaskGroup{{Name: "web", Count: 1}}}
}

func TestJobStatus(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web"] = sampleJob()
	f.jobs["batchy-longer-name"] = &messages.Job{ID: "batchy-longer-name", Type: "batch", Priority: 70, Status: "dead"}
	f.summaries["web"] = &api.JobSummary{JobID: "web", Summary: map[string]api.TaskGroupSummary{"web": {Running: 2, Failed: 1}}}
	stub := allocStub("running")
	stub.CreateTime, stub.ModifyTime = ago(5*time.Second), ago(90*time.Second)
	f.jobAllocs["web"] = [][]*api.AllocListStub{{stub}}

	t.Run("list", func(t *testing.T) {
		code, out, _ := f.runCLI("job", "status")
		require.Equal(t, 0, code)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 3)
		cols := columnStarts(lines[0], "ID", "Type", "Priority", "Status", "Submit Date")
		require.True(t, strings.HasPrefix(lines[1], "batchy-longer-name  batch "), lines[1])
		require.Equal(t, cols[1], strings.Index(lines[1], " batch ")+1, "Type column aligned")
		require.Equal(t, cols[1], strings.Index(lines[2], "service"), "Type column aligned")
		require.Equal(t, cols[4], strings.Index(lines[2], "2026-11-29T19:01:02Z"))
	})
	t.Run("detail", func(t *testing.T) {
		code, out, _ := f.runCLI("job", "status", "web")
		require.Equal(t, 0, code)
		require.Contains(t, out, "ID          = web\n")
		require.Contains(t, out, "Submit Date = 2026-11-29T19:01:02Z\n")
		require.Contains(t, out, "Datacenters = dc1,dc2\n")
		header := lineWith(t, out, "Task Group  Queued")
		row := lineWith(t, out, "web         0")
		require.Equal(t, strings.Index(header, "Running"), strings.Index(row, "2"))
		allocRow := lineWith(t, out, "a1a1a1a1")
		require.Regexp(t, `^a1a1a1a1  n1n1n1n1  web\s+0\s+run\s+running\s+5s ago\s+1m30s ago$`, allocRow)
	})
	t.Run("placement failure", func(t *testing.T) {
		failed := map[string]*messages.AllocMetric{"web": {NodesEvaluated: 2, NodesFiltered: 2,
			ConstraintFiltered: map[string]int32{"missing drivers": 2}}}
		f.jobEvals["web"] = []*messages.Evaluation{
			{ID: "old", CreateIndex: 1, FailedTGAllocs: map[string]*messages.AllocMetric{"web": {NodesExhausted: 1}}, BlockedEval: "gone"},
			{ID: "e2", CreateIndex: 5, Status: "complete", FailedTGAllocs: failed, BlockedEval: "b2"},
			{ID: "b2", CreateIndex: 6, Status: "blocked"},
		}
		defer delete(f.jobEvals, "web")
		code, out, _ := f.runCLI("job", "status", "web")
		require.Equal(t, 0, code)
		require.Contains(t, out, "\nPlacement Failure\nTask Group \"web\":\n  * Constraint \"missing drivers\": 2 nodes excluded by filter\n\nAllocations\n")
		f.jobEvals["web"][2].Status = "complete" // placed once a node came: nothing waits
		code, out, _ = f.runCLI("job", "status", "web")
		require.Equal(t, 0, code)
		require.NotContains(t, out, "Placement Failure")
	})
	t.Run("json round trip", func(t *testing.T) {
		code, out, _ := f.runCLI("job", "status", "-json", "web")
		require.Equal(t, 0, code)
		var got messages.Job
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.True(t, proto.Equal(sampleJob(), &got))
	})
	t.Run("inspect", func(t *testing.T) {
		code, out, _ := f.runCLI("job", "inspect", "web")
		require.Equal(t, 0, code)
		var got struct{ Job *messages.Job }
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.True(t, proto.Equal(sampleJob(), got.Job))
	})
	t.Run("prefix", func(t *testing.T) {
		code, out, _ := f.runCLI("job", "status", "we")
		require.Equal(t, 0, code)
		require.Contains(t, out, "ID          = web\n")
	})
	t.Run("unknown", func(t *testing.T) {
		code, _, errOut := f.runCLI("job", "status", "zzz")
		require.Equal(t, 1, code)
		require.Contains(t, errOut, `Error querying job: troupe: no match: no job with prefix or ID "zzz"`)
	})
}

func TestPrefixAmbiguous(t *testing.T) {
	f := newFakeAPI(t)
	f.jobs["web-a"] = &messages.Job{ID: "web-a"}
	f.jobs["web-b"] = &messages.Job{ID: "web-b"}
	code, _, errOut := f.runCLI("job", "status", "web")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "ambiguous prefix")
	require.Contains(t, errOut, "web-a")
	require.Contains(t, errOut, "web-b")
}
