package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// testNow is the frozen clock of every CLI test.
var testNow = time.Date(2026, 11, 29, 19, 1, 12, 0, time.UTC)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "executor" { // the exec driver's executor of an agent test
		os.Exit(executorCommand(os.Args[2:]))
	}
	nowFunc = func() time.Time { return testNow }
	getenv = func(string) string { return "" }
	monitorDefaults.pollFloor = time.Millisecond
	monitorDefaults.waitTime = 50 * time.Millisecond
	os.Exit(m.Run())
}

// ago is testNow minus d, in unix nanos.
func ago(d time.Duration) int64 { return testNow.Add(-d).UnixNano() }

// call is one request the fake API received.
type call struct {
	Method, Path string
	Query        map[string]string
	Body         string
}

// fakeAPI serves messages structs like troupe's HTTP API. Evals and job
// allocations may be sequences: each GET moves one step, then the last
// step repeats.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu          sync.Mutex
	calls       []call
	index       uint64
	jobs        map[string]*messages.Job
	summaries   map[string]*api.JobSummary
	evals       map[string][]*messages.Evaluation
	jobEvals    map[string][]*messages.Evaluation // GET /v1/job/:id/evaluations
	jobAllocs   map[string][][]*api.AllocListStub
	allocs      map[string]*messages.Allocation
	nodes       map[string]*messages.Node
	pools       map[string]*messages.NodePool // node_pool_test.go
	members     *api.ServerMembers
	leader      string
	raft        *api.RaftConfiguration
	actors      map[string]*api.ActorTree
	logs        map[string]string // "alloc/task/type"
	stats       map[string]*api.HostStats
	allocStats  map[string]*api.AllocResourceUsage // alloc_stats_test.go
	plan        *api.JobPlanResponse               // answered by PUT /v1/job/:id/plan
	versions    *api.JobVersionsResponse
	registerErr string                            // a 400 body for PUT /v1/jobs
	evalID      string                            // answered by writes
	deployments map[string][]*messages.Deployment // deployment_test.go: a sequence per ID
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, index: 10, jobs: map[string]*messages.Job{}, summaries: map[string]*api.JobSummary{},
		evals: map[string][]*messages.Evaluation{}, jobAllocs: map[string][][]*api.AllocListStub{}, jobEvals: map[string][]*messages.Evaluation{},
		allocs: map[string]*messages.Allocation{}, nodes: map[string]*messages.Node{}, pools: map[string]*messages.NodePool{},
		actors: map[string]*api.ActorTree{}, logs: map[string]string{}, stats: map[string]*api.HostStats{},
		allocStats: map[string]*api.AllocResourceUsage{}}
	mux := http.NewServeMux()
	f.routes(mux)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		q := map[string]string{}
		for k := range r.URL.Query() {
			q[k] = r.URL.Query().Get(k)
		}
		f.mu.Lock()
		f.calls = append(f.calls, call{Method: r.Method, Path: r.URL.Path, Query: q, Body: string(body)})
		f.index++
		w.Header().Set("X-Nomad-Index", strconv.FormatUint(f.index, 10))
		defer f.mu.Unlock() // one request at a time
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) routes(mux *http.ServeMux) {
	mux.HandleFunc("PUT /v1/jobs", f.register)
	mux.HandleFunc("POST /v1/jobs/parse", f.parse)
	mux.HandleFunc("GET /v1/jobs", f.listJobs)
	mux.HandleFunc("GET /v1/job/{id}", get(f, func(id string) any { return f.jobs[id] }))
	mux.HandleFunc("DELETE /v1/job/{id}", f.write(func(id string) any {
		return &api.JobDeregisterResponse{EvalID: f.evalID, Index: f.index}
	}))
	mux.HandleFunc("GET /v1/job/{id}/summary", get(f, func(id string) any { return f.summaries[id] }))
	mux.HandleFunc("GET /v1/job/{id}/allocations", get(f, f.nextJobAllocs))
	mux.HandleFunc("GET /v1/job/{id}/evaluations", get(f, func(id string) any { return append([]*messages.Evaluation{}, f.jobEvals[id]...) }))
	mux.HandleFunc("GET /v1/evaluation/{id}", get(f, f.nextEval))
	mux.HandleFunc("GET /v1/evaluations", f.listEvals)
	mux.HandleFunc("GET /v1/allocation/{id}", get(f, func(id string) any { return f.allocs[id] }))
	mux.HandleFunc("GET /v1/allocations", f.listAllocs)
	mux.HandleFunc("GET /v1/client/allocation/{id}/stats", get(f, func(id string) any { return f.allocStats[id] }))
	mux.HandleFunc("POST /v1/allocation/{id}/stop", f.write(func(string) any { return &api.AllocStopResponse{EvalID: f.evalID} }))
	mux.HandleFunc("GET /v1/node/{id}", get(f, func(id string) any { return f.nodes[id] }))
	mux.HandleFunc("GET /v1/nodes", f.listNodes)
	mux.HandleFunc("GET /v1/node/{id}/{sub}", get(f, f.nodeAllocs)) // a pattern /v1/node/pool/{name} can beat
	f.poolRoutes(mux)
	mux.HandleFunc("PUT /v1/job/{id}/plan", get(f, func(string) any { return f.plan }))
	mux.HandleFunc("GET /v1/job/{id}/versions", get(f, func(string) any { return f.versions }))
	mux.HandleFunc("PUT /v1/job/{id}/revert", f.write(func(string) any { return &api.JobRegisterResponse{EvalID: f.evalID} }))
	mux.HandleFunc("PUT /v1/job/{id}/dispatch", f.write(func(id string) any {
		return &api.JobDispatchResponse{DispatchedJobID: id + "/dispatch-1700000000-0a1b2c3d", EvalID: f.evalID}
	}))
	mux.HandleFunc("POST /v1/job/{id}/periodic/force", f.write(func(string) any { return &api.PeriodicForceResponse{EvalID: f.evalID} }))
	mux.HandleFunc("PUT /v1/job/{id}/scale", f.write(func(string) any { return &api.JobRegisterResponse{EvalID: f.evalID} }))
	mux.HandleFunc("GET /v1/client/stats", func(w http.ResponseWriter, r *http.Request) {
		f.reply(w, f.stats[r.URL.Query().Get("node_id")])
	})
	mux.HandleFunc("POST /v1/node/{id}/eligibility", f.write(func(string) any { return &api.NodeEligibilityUpdateResponse{} }))
	mux.HandleFunc("GET /v1/agent/members", get(f, func(string) any { return f.members }))
	mux.HandleFunc("GET /v1/status/leader", get(f, func(string) any { return f.leader }))
	mux.HandleFunc("GET /v1/operator/raft/configuration", get(f, func(string) any { return f.raft }))
	mux.HandleFunc("GET /v1/actors", func(w http.ResponseWriter, r *http.Request) {
		f.reply(w, f.actors[r.URL.Query().Get("node")])
	})
	mux.HandleFunc("GET /v1/client/fs/logs/{id}", f.serveLogs)
	f.deploymentRoutes(mux)
	mux.HandleFunc("POST /v1/client/allocation/{id}/{op}", f.write(func(id string) any { // signal, restart
		if f.allocs[id] == nil {
			return nil
		}
		return struct{ Index uint64 }{}
	}))
}

// get serves what pick returns for the {id} path value, or a 404.
func get(f *fakeAPI, pick func(id string) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.reply(w, pick(r.PathValue("id")))
	}
}

func (f *fakeAPI) write(answer func(id string) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { f.reply(w, answer(r.PathValue("id"))) }
}

func (f *fakeAPI) reply(w http.ResponseWriter, v any) {
	if v == nil || isNilPtr(v) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	require.NoError(f.t, json.NewEncoder(w).Encode(v))
}

// isNilPtr reports whether v is a nil pointer, slice or map (an unknown
// object: 404).
func isNilPtr(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return rv.IsNil()
	}
	return false
}

func (f *fakeAPI) register(w http.ResponseWriter, r *http.Request) {
	if f.registerErr != "" {
		http.Error(w, f.registerErr, http.StatusBadRequest)
		return
	}
	var req api.JobRegisterRequest
	require.NoError(f.t, json.NewDecoder(r.Body).Decode(&req))
	f.jobs[req.Job.ID] = req.Job
	f.reply(w, &api.JobRegisterResponse{EvalID: f.evalID, Index: f.index})
}

// parse answers a fixed job named by the HCL's first quoted word.
func (f *fakeAPI) parse(w http.ResponseWriter, r *http.Request) {
	var req api.JobsParseRequest
	require.NoError(f.t, json.NewDecoder(r.Body).Decode(&req))
	fields := strings.Split(req.JobHCL, `"`)
	require.Greater(f.t, len(fields), 1, "fake parse wants job \"ID\"")
	f.reply(w, &messages.Job{ID: fields[1], Name: fields[1], Type: "service"})
}

func (f *fakeAPI) nextEval(id string) any {
	seq := f.evals[id]
	if len(seq) == 0 {
		return nil
	}
	e := seq[0]
	if len(seq) > 1 {
		f.evals[id] = seq[1:]
	}
	return e
}

func (f *fakeAPI) nextJobAllocs(id string) any {
	seq := f.jobAllocs[id]
	if len(seq) == 0 {
		return []*api.AllocListStub{}
	}
	a := seq[0]
	if len(seq) > 1 {
		f.jobAllocs[id] = seq[1:]
	}
	return a
}

func (f *fakeAPI) listJobs(w http.ResponseWriter, r *http.Request) {
	out := []*api.JobListStub{}
	for _, j := range f.jobs {
		if strings.HasPrefix(j.ID, r.URL.Query().Get("prefix")) {
			out = append(out, &api.JobListStub{ID: j.ID, ParentID: j.ParentID, Name: j.Name, Namespace: j.Namespace, Type: j.Type, Priority: int(j.Priority),
				Status: j.Status, SubmitTime: j.SubmitTime})
		}
	}
	f.reply(w, out)
}

func (f *fakeAPI) listEvals(w http.ResponseWriter, r *http.Request) {
	out := []*messages.Evaluation{}
	for id, seq := range f.evals {
		if strings.HasPrefix(id, r.URL.Query().Get("prefix")) {
			out = append(out, seq[0])
		}
	}
	f.reply(w, out)
}

func (f *fakeAPI) listAllocs(w http.ResponseWriter, r *http.Request) {
	out := []*api.AllocListStub{}
	for _, a := range f.allocs {
		if strings.HasPrefix(a.ID, r.URL.Query().Get("prefix")) {
			out = append(out, api.NewAllocListStub(a))
		}
	}
	f.reply(w, out)
}

// nodeAllocs answers the node's whole allocations; nil (a 404) for an
// unknown node.
func (f *fakeAPI) nodeAllocs(id string) any {
	if f.nodes[id] == nil {
		return nil
	}
	out := []*messages.Allocation{}
	for _, a := range f.allocs {
		if a.NodeID == id {
			out = append(out, a)
		}
	}
	return out
}

func (f *fakeAPI) listNodes(w http.ResponseWriter, r *http.Request) {
	out := []*api.NodeListStub{}
	for _, n := range f.nodes {
		if strings.HasPrefix(n.ID, r.URL.Query().Get("prefix")) {
			out = append(out, &api.NodeListStub{ID: n.ID, Name: n.Name, Datacenter: n.Datacenter,
				NodePool: n.NodePool, NodeClass: n.NodeClass, Drain: n.Drain,
				SchedulingEligibility: n.SchedulingEligibility, Status: n.Status})
		}
	}
	f.reply(w, out)
}

func (f *fakeAPI) serveLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data, ok := f.logs[r.PathValue("id")+"/"+q.Get("task")+"/"+q.Get("type")]
	if !ok {
		http.Error(w, "no such log", http.StatusNotFound)
		return
	}
	off, _ := strconv.Atoi(q.Get("offset"))
	if q.Get("origin") == "end" {
		off = max(len(data)-off, 0)
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, data[min(off, len(data)):])
}

// callsTo lists the recorded calls of method and path.
func (f *fakeAPI) callsTo(method, path string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.Method == method && c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// runCLI runs the CLI against the fake API and returns the exit code and
// both streams.
func (f *fakeAPI) runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	full := append([]string{}, args...)
	// insert -address after the command words
	at := 0
	for at < len(full) && !strings.HasPrefix(full[at], "-") && isCommandWord(full[:at+1]) {
		at++
	}
	full = append(full[:at], append([]string{"-address", f.srv.URL}, full[at:]...)...)
	code := run(full, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// isCommandWord says whether words is a path in the command tree.
func isCommandWord(words []string) bool {
	n := commandTree()
	for _, w := range words {
		sub, ok := n.subs[w]
		if !ok {
			return false
		}
		n = sub
	}
	return true
}

// columnStarts is where each column title begins in a header line.
func columnStarts(header string, titles ...string) []int {
	out := make([]int, 0, len(titles))
	for _, t := range titles {
		out = append(out, strings.Index(header, t))
	}
	return out
}

// lineWith is the first line of out containing s.
func lineWith(t *testing.T, out, s string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	require.Failf(t, "line not found", "no line with %q in:\n%s", s, out)
	return ""
}
