package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// schedConfigAPI serves /v1/operator/scheduler/configuration with
// check-and-set, as the agent does.
type schedConfigAPI struct {
	mu  sync.Mutex
	cfg *messages.SchedulerConfiguration
	srv *httptest.Server
}

func newSchedConfigAPI(t *testing.T) *schedConfigAPI {
	s := &schedConfigAPI{cfg: &messages.SchedulerConfiguration{SchedulerAlgorithm: "binpack", ModifyIndex: 5,
		PreemptionConfig: &messages.PreemptionConfig{SystemSchedulerEnabled: true}}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *schedConfigAPI) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(&api.SchedulerConfigurationResponse{SchedulerConfig: s.cfg, Index: s.cfg.ModifyIndex})
		return
	}
	var in messages.SchedulerConfiguration
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cas, err := strconv.ParseUint(r.URL.Query().Get("cas"), 10, 64)
	if err != nil || cas != s.cfg.ModifyIndex {
		_ = json.NewEncoder(w).Encode(&api.SchedulerSetConfigurationResponse{Updated: false, Index: s.cfg.ModifyIndex})
		return
	}
	s.cfg = proto.Clone(&in).(*messages.SchedulerConfiguration)
	s.cfg.ModifyIndex = cas + 1
	_ = json.NewEncoder(w).Encode(&api.SchedulerSetConfigurationResponse{Updated: true, Index: s.cfg.ModifyIndex})
}

func (s *schedConfigAPI) run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"operator", "scheduler", args[0], "-address", s.srv.URL}, args[1:]...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestSchedulerGetConfig(t *testing.T) {
	s := newSchedConfigAPI(t)
	code, out, errOut := s.run("get-config")
	require.Equal(t, 0, code, errOut)
	for _, line := range []string{
		"Scheduler Algorithm           = binpack",
		"Memory Oversubscription       = false",
		"Reject Job Registration       = false",
		"Pause Eval Broker             = false",
		"Preemption System Scheduler   = true",
		"Preemption Service Scheduler  = false",
		"Preemption Batch Scheduler    = false",
		"Preemption SysBatch Scheduler = false",
		"Modify Index                  = 5",
	} {
		require.Contains(t, out, line+"\n")
	}
	code, out, _ = s.run("get-config", "-json")
	require.Equal(t, 0, code)
	var resp api.SchedulerConfigurationResponse
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	require.Equal(t, "binpack", resp.SchedulerConfig.GetSchedulerAlgorithm())
}

// TestSchedulerSetConfig: the flags given change only their fields of the
// configuration read back; the write is a check-and-set on its
// ModifyIndex or -check-index; a stale index says so and exits 1.
func TestSchedulerSetConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		out     string
		changed func(c *messages.SchedulerConfiguration)
	}{
		{name: "algorithm and service preemption", args: []string{"-scheduler-algorithm=spread", "-preempt-service-scheduler=true"},
			out: "Scheduler configuration updated!", changed: func(c *messages.SchedulerConfiguration) {
				c.SchedulerAlgorithm = "spread"
				c.PreemptionConfig.ServiceSchedulerEnabled = true
			}},
		{name: "bare flags are true, =false turns off", args: []string{"-preempt-batch-scheduler", "-memory-oversubscription",
			"-reject-job-registration", "-pause-eval-broker", "-preempt-system-scheduler=false", "-preempt-sysbatch-scheduler=false"},
			out: "Scheduler configuration updated!", changed: func(c *messages.SchedulerConfiguration) {
				c.PreemptionConfig = &messages.PreemptionConfig{BatchSchedulerEnabled: true}
				c.MemoryOversubscriptionEnabled, c.RejectJobRegistration, c.PauseEvalBroker = true, true, true
			}},
		{name: "the current check index", args: []string{"-check-index", "5", "-scheduler-algorithm=spread"},
			out: "Scheduler configuration updated!", changed: func(c *messages.SchedulerConfiguration) { c.SchedulerAlgorithm = "spread" }},
		{name: "a stale check index", args: []string{"-check-index", "4", "-scheduler-algorithm=spread"}, code: 1,
			out: "Scheduler configuration could not be atomically updated, please try again"},
		{name: "a bad boolean", args: []string{"-preempt-batch-scheduler=maybe"}, code: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedConfigAPI(t)
			want := proto.Clone(s.cfg).(*messages.SchedulerConfiguration)
			code, out, errOut := s.run(append([]string{"set-config"}, tt.args...)...)
			require.Equal(t, tt.code, code, "%s%s", out, errOut)
			require.Contains(t, out, tt.out)
			if tt.changed != nil {
				tt.changed(want)
				want.ModifyIndex++
			}
			require.True(t, proto.Equal(want, s.cfg), fmt.Sprintf("want %v\ngot  %v", want, s.cfg))
		})
	}
}

// TestJobPlanPreemptions: `job plan` lists the allocations it would
// preempt, one by one while few, else per job.
func TestJobPlanPreemptions(t *testing.T) {
	stub := func(i int, job string) *api.AllocListStub {
		return &api.AllocListStub{ID: fmt.Sprintf("alloc-%02d", i), JobID: job, Namespace: "default", JobType: "service",
			NodeID: "node-1", TaskGroup: "g"}
	}
	f := newFakeAPI(t)
	file := writeFile(t, "web.hcl", `job "web" {}`)
	f.plan = &api.JobPlanResponse{Warnings: "1 warning:\n\n* be careful",
		Annotations: &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{"g": {Place: 1, Preemptions: 1}},
			PreemptedAllocs: []*api.AllocListStub{stub(1, "low")}}}
	code, out, errOut := f.runCLI("job", "plan", file)
	require.Equal(t, exitPlanChanges, code, errOut)
	require.Contains(t, out, "Job Warnings:\n1 warning:\n\n* be careful\n")
	require.Contains(t, out, "\nPreemptions:\n\nAlloc ID  Job ID  Node ID  Task Group\nalloc-01  low     node-1   g\n")

	var many []*api.AllocListStub
	for i := range 12 {
		many = append(many, stub(i, []string{"a", "b"}[i%2]))
	}
	f.plan.Annotations.PreemptedAllocs = many
	_, out, _ = f.runCLI("job", "plan", file)
	require.Contains(t, out, "Job ID  Namespace  Job Type  Preemptions\na       default    service   6\nb       default    service   6\n")
}
