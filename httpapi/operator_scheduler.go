package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

var schedulerConfigTables = []string{state.TableSchedulerConfig}

// errRegistrationRejected is Nomad's words for a registration refused
// while the scheduler configuration sets RejectJobRegistration (a 403).
const errRegistrationRejected = "Job registration, dispatch, and scale are disabled by the scheduler configuration"

// schedulerGetConfig handles GET /v1/operator/scheduler/configuration:
// the configuration in force, the defaults while none was set.
func (s *Server) schedulerGetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, schedulerConfigTables, func(snap *state.Snap) (any, error) {
		return &api.SchedulerConfigurationResponse{SchedulerConfig: snap.SchedulerConfig(),
			Index: max(snap.Index(schedulerConfigTables...), 1), KnownLeader: s.b.Leader() != ""}, nil
	})
}

// schedulerSetConfig handles PUT and POST
// /v1/operator/scheduler/configuration on the leader (a follower passes
// it on): the body replaces the configuration, with ?cas=INDEX only if
// its ModifyIndex is INDEX. A bad value is a 400 naming the field, which
// changes nothing.
func (s *Server) schedulerSetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	var cfg messages.SchedulerConfiguration
	if err := decodeBody(r, &cfg); err != nil {
		return nil, err
	}
	if err := state.ValidateSchedulerConfig(&cfg); err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	cmd := &messages.SetSchedulerConfig{Config: &cfg}
	if v := r.URL.Query().Get("cas"); v != "" {
		cmd.CAS = true
		cmd.Index, _ = strconv.ParseUint(v, 10, 64) // checked by parseQuery
	}
	resp, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_SetSchedulerConfig{SetSchedulerConfig: cmd}})
	if errors.Is(err, state.ErrInvalidSchedulerConfig) {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	if err != nil {
		return nil, err
	}
	res, ok := resp.(*state.SetSchedulerConfigResult)
	if !ok {
		return nil, fmt.Errorf("httpapi: scheduler configuration: unexpected answer %T", resp)
	}
	setIndex(w, index)
	return &api.SchedulerSetConfigurationResponse{Updated: res.Updated, Index: index}, nil
}

// registrationAllowed refuses, with Nomad's 403, a job registration
// (register, revert, scale) while the configuration rejects them.
func (s *Server) registrationAllowed() error {
	if s.b.Store().Snapshot().SchedulerConfig().GetRejectJobRegistration() {
		return codeErr(http.StatusForbidden, errRegistrationRejected)
	}
	return nil
}

// jobWarnings are the warnings of a job registered or planned under the
// stored configuration, worded and listed as Nomad does: without memory
// oversubscription, every task's memory_max is ignored. extra are the
// request's own warnings ("" for none), listed first.
func (s *Server) jobWarnings(job *messages.Job, extra ...string) string {
	var warns []string
	for _, w := range extra {
		if w != "" {
			warns = append(warns, w)
		}
	}
	if !s.b.Store().Snapshot().SchedulerConfig().GetMemoryOversubscriptionEnabled() {
		warns = append(warns, memoryMaxWarnings(job)...)
	}
	if len(warns) == 0 {
		return ""
	}
	noun := "warning"
	if len(warns) > 1 {
		noun = "warnings"
	}
	return fmt.Sprintf("%d %s:\n\n* %s", len(warns), noun, strings.Join(warns, "\n* "))
}

// preemptedStubs lists the allocations a plan would preempt, for a job
// plan's Annotations.PreemptedAllocs.
func preemptedStubs(snap *state.Snap, plan *messages.ApplyPlan) []*api.AllocListStub {
	var out []*api.AllocListStub
	for _, p := range plan.GetPreemptions() {
		a := snap.AllocByID(p.GetAllocID())
		if a == nil {
			continue
		}
		stub := api.NewAllocListStub(a)
		stub.JobType = snap.JobByID(a.GetNamespace(), a.GetJobID()).GetType()
		out = append(out, stub)
	}
	return out
}

// memoryMaxWarnings: every task's memory_max is ignored without memory
// oversubscription.
func memoryMaxWarnings(job *messages.Job) []string {
	var warns []string
	for _, tg := range job.GetTaskGroups() {
		for _, t := range tg.GetTasks() {
			if t.GetResources().GetMemoryMaxMB() != 0 {
				warns = append(warns, fmt.Sprintf("Memory oversubscription is not enabled; Task \"%s.%s\" memory_max value will be ignored. "+
					"Update the Scheduler Configuration to allow oversubscription.", tg.GetName(), t.GetName()))
			}
		}
	}
	return warns
}
